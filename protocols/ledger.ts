/* eslint-disable import/export */
/* eslint-disable complexity */
/* eslint-disable @typescript-eslint/no-namespace */
/* eslint-disable @typescript-eslint/no-unnecessary-boolean-literal-compare */
/* eslint-disable @typescript-eslint/no-empty-interface */
/* eslint-disable import/consistent-type-specifier-style */
/* eslint-disable @typescript-eslint/no-unused-vars */

import { EMPTY_BYTES } from './empty-bytes.js'
import { decodeMessage, encodeMessage, enumeration, MaxLengthError, message } from 'protons-runtime'
import type { Codec, DecodeOptions } from 'protons-runtime'
import type { Uint8ArrayList } from 'uint8arraylist'

export interface LedgerEntry {
  author: Uint8Array
  seq: bigint
  prevHash: Uint8Array
  time: bigint
  kind: LedgerEntry.BodyKind
  body: Uint8Array
  chain: number
}

export namespace LedgerEntry {
  export enum BodyKind {
    BODY_KIND_UNSPECIFIED = 'BODY_KIND_UNSPECIFIED',
    ATTESTATION = 'ATTESTATION',
    RECEIPT = 'RECEIPT',
    HEARTBEAT_SUMMARY = 'HEARTBEAT_SUMMARY',
    FRAUD_PROOF = 'FRAUD_PROOF',
    USAGE = 'USAGE'
  }

  enum __BodyKindValues {
    BODY_KIND_UNSPECIFIED = 0,
    ATTESTATION = 1,
    RECEIPT = 2,
    HEARTBEAT_SUMMARY = 3,
    FRAUD_PROOF = 4,
    USAGE = 5
  }

  export namespace BodyKind {
    let _codec: Codec<BodyKind> | undefined
    export const codec = (): Codec<BodyKind> => {
      return (_codec ??= enumeration<BodyKind>(__BodyKindValues))
    }
  }

  let _codec: Codec<LedgerEntry>

  export const codec = (): Codec<LedgerEntry> => {
    if (_codec == null) {
      _codec = message<LedgerEntry>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.author != null && obj.author.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.author)
        }

        if ((obj.seq != null && obj.seq !== 0n)) {
          w.uint32(16)
          w.uint64(obj.seq)
        }

        if ((obj.prevHash != null && obj.prevHash.byteLength > 0)) {
          w.uint32(26)
          w.bytes(obj.prevHash)
        }

        if ((obj.time != null && obj.time !== 0n)) {
          w.uint32(32)
          w.uint64(obj.time)
        }

        if (obj.kind != null && __BodyKindValues[obj.kind] !== 0) {
          w.uint32(40)
          LedgerEntry.BodyKind.codec().encode(obj.kind, w)
        }

        if ((obj.body != null && obj.body.byteLength > 0)) {
          w.uint32(50)
          w.bytes(obj.body)
        }

        if ((obj.chain != null && obj.chain !== 0)) {
          w.uint32(56)
          w.uint32(obj.chain)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          author: EMPTY_BYTES,
          seq: 0n,
          prevHash: EMPTY_BYTES,
          time: 0n,
          kind: BodyKind.BODY_KIND_UNSPECIFIED,
          body: EMPTY_BYTES,
          chain: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.author = reader.bytes()
              break
            }
            case 2: {
              obj.seq = reader.uint64()
              break
            }
            case 3: {
              obj.prevHash = reader.bytes()
              break
            }
            case 4: {
              obj.time = reader.uint64()
              break
            }
            case 5: {
              obj.kind = LedgerEntry.BodyKind.codec().decode(reader)
              break
            }
            case 6: {
              obj.body = reader.bytes()
              break
            }
            case 7: {
              obj.chain = reader.uint32()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<LedgerEntry>): Uint8Array => {
    return encodeMessage(obj, LedgerEntry.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<LedgerEntry>): LedgerEntry => {
    return decodeMessage(buf, LedgerEntry.codec(), opts)
  }
}

export interface HeartbeatSummary {
  periodStart: bigint
  periodEnd: bigint
  heartbeatsSent: number
  intervalMs: number
  availableMs: bigint
  upMs: bigint
  slotsTotal: number
  busyPpm: number
}

export namespace HeartbeatSummary {
  let _codec: Codec<HeartbeatSummary>

  export const codec = (): Codec<HeartbeatSummary> => {
    if (_codec == null) {
      _codec = message<HeartbeatSummary>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.periodStart != null && obj.periodStart !== 0n)) {
          w.uint32(8)
          w.uint64(obj.periodStart)
        }

        if ((obj.periodEnd != null && obj.periodEnd !== 0n)) {
          w.uint32(16)
          w.uint64(obj.periodEnd)
        }

        if ((obj.heartbeatsSent != null && obj.heartbeatsSent !== 0)) {
          w.uint32(24)
          w.uint32(obj.heartbeatsSent)
        }

        if ((obj.intervalMs != null && obj.intervalMs !== 0)) {
          w.uint32(32)
          w.uint32(obj.intervalMs)
        }

        if ((obj.availableMs != null && obj.availableMs !== 0n)) {
          w.uint32(40)
          w.uint64(obj.availableMs)
        }

        if ((obj.upMs != null && obj.upMs !== 0n)) {
          w.uint32(48)
          w.uint64(obj.upMs)
        }

        if ((obj.slotsTotal != null && obj.slotsTotal !== 0)) {
          w.uint32(56)
          w.uint32(obj.slotsTotal)
        }

        if ((obj.busyPpm != null && obj.busyPpm !== 0)) {
          w.uint32(64)
          w.uint32(obj.busyPpm)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          periodStart: 0n,
          periodEnd: 0n,
          heartbeatsSent: 0,
          intervalMs: 0,
          availableMs: 0n,
          upMs: 0n,
          slotsTotal: 0,
          busyPpm: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.periodStart = reader.uint64()
              break
            }
            case 2: {
              obj.periodEnd = reader.uint64()
              break
            }
            case 3: {
              obj.heartbeatsSent = reader.uint32()
              break
            }
            case 4: {
              obj.intervalMs = reader.uint32()
              break
            }
            case 5: {
              obj.availableMs = reader.uint64()
              break
            }
            case 6: {
              obj.upMs = reader.uint64()
              break
            }
            case 7: {
              obj.slotsTotal = reader.uint32()
              break
            }
            case 8: {
              obj.busyPpm = reader.uint32()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<HeartbeatSummary>): Uint8Array => {
    return encodeMessage(obj, HeartbeatSummary.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<HeartbeatSummary>): HeartbeatSummary => {
    return decodeMessage(buf, HeartbeatSummary.codec(), opts)
  }
}

export interface FraudProof {
  kind: FraudProof.Kind
  accused: Uint8Array
  first: Uint8Array
  second: Uint8Array
  evidence: Uint8Array[]
  createdAt: bigint
}

export namespace FraudProof {
  export enum Kind {
    KIND_UNSPECIFIED = 'KIND_UNSPECIFIED',
    EQUIVOCATION = 'EQUIVOCATION',
    BAD_OUTPUT = 'BAD_OUTPUT'
  }

  enum __KindValues {
    KIND_UNSPECIFIED = 0,
    EQUIVOCATION = 1,
    BAD_OUTPUT = 2
  }

  export namespace Kind {
    let _codec: Codec<Kind> | undefined
    export const codec = (): Codec<Kind> => {
      return (_codec ??= enumeration<Kind>(__KindValues))
    }
  }

  let _codec: Codec<FraudProof>

  export const codec = (): Codec<FraudProof> => {
    if (_codec == null) {
      _codec = message<FraudProof>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if (obj.kind != null && __KindValues[obj.kind] !== 0) {
          w.uint32(8)
          FraudProof.Kind.codec().encode(obj.kind, w)
        }

        if ((obj.accused != null && obj.accused.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.accused)
        }

        if ((obj.first != null && obj.first.byteLength > 0)) {
          w.uint32(26)
          w.bytes(obj.first)
        }

        if ((obj.second != null && obj.second.byteLength > 0)) {
          w.uint32(34)
          w.bytes(obj.second)
        }

        if (obj.evidence != null) {
          for (const value of obj.evidence) {
            w.uint32(42)
            w.bytes(value)
          }
        }

        if ((obj.createdAt != null && obj.createdAt !== 0n)) {
          w.uint32(48)
          w.uint64(obj.createdAt)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          kind: Kind.KIND_UNSPECIFIED,
          accused: EMPTY_BYTES,
          first: EMPTY_BYTES,
          second: EMPTY_BYTES,
          evidence: [],
          createdAt: 0n
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.kind = FraudProof.Kind.codec().decode(reader)
              break
            }
            case 2: {
              obj.accused = reader.bytes()
              break
            }
            case 3: {
              obj.first = reader.bytes()
              break
            }
            case 4: {
              obj.second = reader.bytes()
              break
            }
            case 5: {
              if (opts.limits?.evidence != null && obj.evidence.length === opts.limits.evidence) {
                throw new MaxLengthError('Decode error - map field "evidence" had too many elements')
              }

              if (obj.evidence.length === 2) {
                throw new MaxLengthError('Decode error - repeated field "evidence" had too many elements')
              }

              obj.evidence.push(reader.bytes())
              break
            }
            case 6: {
              obj.createdAt = reader.uint64()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<FraudProof>): Uint8Array => {
    return encodeMessage(obj, FraudProof.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<FraudProof>): FraudProof => {
    return decodeMessage(buf, FraudProof.codec(), opts)
  }
}

export interface SyncRequest {
  heads?: SyncRequest.Heads
  range?: SyncRequest.Range
  ranges?: SyncRequest.Ranges
}

export namespace SyncRequest {
  export interface Heads {
    ownAuthor: Uint8Array
    ownSeq: bigint
    ownHash: Uint8Array
    afterAuthor: Uint8Array
    limit: number
  }

  export namespace Heads {
    let _codec: Codec<Heads>

    export const codec = (): Codec<Heads> => {
      if (_codec == null) {
        _codec = message<Heads>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.ownAuthor != null && obj.ownAuthor.byteLength > 0)) {
            w.uint32(10)
            w.bytes(obj.ownAuthor)
          }

          if ((obj.ownSeq != null && obj.ownSeq !== 0n)) {
            w.uint32(16)
            w.uint64(obj.ownSeq)
          }

          if ((obj.ownHash != null && obj.ownHash.byteLength > 0)) {
            w.uint32(26)
            w.bytes(obj.ownHash)
          }

          if ((obj.afterAuthor != null && obj.afterAuthor.byteLength > 0)) {
            w.uint32(82)
            w.bytes(obj.afterAuthor)
          }

          if ((obj.limit != null && obj.limit !== 0)) {
            w.uint32(88)
            w.uint32(obj.limit)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            ownAuthor: EMPTY_BYTES,
            ownSeq: 0n,
            ownHash: EMPTY_BYTES,
            afterAuthor: EMPTY_BYTES,
            limit: 0
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.ownAuthor = reader.bytes()
                break
              }
              case 2: {
                obj.ownSeq = reader.uint64()
                break
              }
              case 3: {
                obj.ownHash = reader.bytes()
                break
              }
              case 10: {
                obj.afterAuthor = reader.bytes()
                break
              }
              case 11: {
                obj.limit = reader.uint32()
                break
              }
              default: {
                reader.skipType(tag & 7)
                break
              }
            }
          }

          return obj
        })
      }

      return _codec
    }

    export const encode = (obj: Partial<Heads>): Uint8Array => {
      return encodeMessage(obj, Heads.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Heads>): Heads => {
      return decodeMessage(buf, Heads.codec(), opts)
    }
  }

  export interface Range {
    author: Uint8Array
    fromSeq: bigint
    limit: number
  }

  export namespace Range {
    let _codec: Codec<Range>

    export const codec = (): Codec<Range> => {
      if (_codec == null) {
        _codec = message<Range>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.author != null && obj.author.byteLength > 0)) {
            w.uint32(10)
            w.bytes(obj.author)
          }

          if ((obj.fromSeq != null && obj.fromSeq !== 0n)) {
            w.uint32(16)
            w.uint64(obj.fromSeq)
          }

          if ((obj.limit != null && obj.limit !== 0)) {
            w.uint32(24)
            w.uint32(obj.limit)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            author: EMPTY_BYTES,
            fromSeq: 0n,
            limit: 0
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.author = reader.bytes()
                break
              }
              case 2: {
                obj.fromSeq = reader.uint64()
                break
              }
              case 3: {
                obj.limit = reader.uint32()
                break
              }
              default: {
                reader.skipType(tag & 7)
                break
              }
            }
          }

          return obj
        })
      }

      return _codec
    }

    export const encode = (obj: Partial<Range>): Uint8Array => {
      return encodeMessage(obj, Range.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Range>): Range => {
      return decodeMessage(buf, Range.codec(), opts)
    }
  }

  export interface Ranges {
    ranges: SyncRequest.Range[]
  }

  export namespace Ranges {
    let _codec: Codec<Ranges>

    export const codec = (): Codec<Ranges> => {
      if (_codec == null) {
        _codec = message<Ranges>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if (obj.ranges != null) {
            for (const value of obj.ranges) {
              w.uint32(10)
              SyncRequest.Range.codec().encode(value, w)
            }
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            ranges: []
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                if (opts.limits?.ranges != null && obj.ranges.length === opts.limits.ranges) {
                  throw new MaxLengthError('Decode error - map field "ranges" had too many elements')
                }

                if (obj.ranges.length === 64) {
                  throw new MaxLengthError('Decode error - repeated field "ranges" had too many elements')
                }

                obj.ranges.push(SyncRequest.Range.codec().decode(reader, reader.uint32(), {
                  limits: opts.limits?.ranges$
                }))
                break
              }
              default: {
                reader.skipType(tag & 7)
                break
              }
            }
          }

          return obj
        })
      }

      return _codec
    }

    export const encode = (obj: Partial<Ranges>): Uint8Array => {
      return encodeMessage(obj, Ranges.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Ranges>): Ranges => {
      return decodeMessage(buf, Ranges.codec(), opts)
    }
  }

  let _codec: Codec<SyncRequest>

  export const codec = (): Codec<SyncRequest> => {
    if (_codec == null) {
      _codec = message<SyncRequest>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        obj = { ...obj }

        if (obj.ranges != null) {
          obj.range = undefined
          obj.heads = undefined
        }

        if (obj.range != null) {
          obj.ranges = undefined
          obj.heads = undefined
        }

        if (obj.heads != null) {
          obj.ranges = undefined
          obj.range = undefined
        }

        if (obj.heads != null) {
          w.uint32(10)
          SyncRequest.Heads.codec().encode(obj.heads, w)
        }

        if (obj.range != null) {
          w.uint32(18)
          SyncRequest.Range.codec().encode(obj.range, w)
        }

        if (obj.ranges != null) {
          w.uint32(26)
          SyncRequest.Ranges.codec().encode(obj.ranges, w)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {}

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.heads = SyncRequest.Heads.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.heads
              })
              break
            }
            case 2: {
              obj.range = SyncRequest.Range.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.range
              })
              break
            }
            case 3: {
              obj.ranges = SyncRequest.Ranges.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.ranges
              })
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        if (obj.ranges != null) {
          delete obj.range
          delete obj.heads
        }

        if (obj.range != null) {
          delete obj.ranges
          delete obj.heads
        }

        if (obj.heads != null) {
          delete obj.ranges
          delete obj.range
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<SyncRequest>): Uint8Array => {
    return encodeMessage(obj, SyncRequest.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<SyncRequest>): SyncRequest => {
    return decodeMessage(buf, SyncRequest.codec(), opts)
  }
}

export interface SyncResponse {
  heads?: SyncResponse.Heads
  entries?: SyncResponse.Entries
  ranges?: SyncResponse.Ranges
}

export namespace SyncResponse {
  export interface Head {
    author: Uint8Array
    seq: bigint
    hash: Uint8Array
  }

  export namespace Head {
    let _codec: Codec<Head>

    export const codec = (): Codec<Head> => {
      if (_codec == null) {
        _codec = message<Head>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.author != null && obj.author.byteLength > 0)) {
            w.uint32(10)
            w.bytes(obj.author)
          }

          if ((obj.seq != null && obj.seq !== 0n)) {
            w.uint32(16)
            w.uint64(obj.seq)
          }

          if ((obj.hash != null && obj.hash.byteLength > 0)) {
            w.uint32(26)
            w.bytes(obj.hash)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            author: EMPTY_BYTES,
            seq: 0n,
            hash: EMPTY_BYTES
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.author = reader.bytes()
                break
              }
              case 2: {
                obj.seq = reader.uint64()
                break
              }
              case 3: {
                obj.hash = reader.bytes()
                break
              }
              default: {
                reader.skipType(tag & 7)
                break
              }
            }
          }

          return obj
        })
      }

      return _codec
    }

    export const encode = (obj: Partial<Head>): Uint8Array => {
      return encodeMessage(obj, Head.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Head>): Head => {
      return decodeMessage(buf, Head.codec(), opts)
    }
  }

  export interface Heads {
    heads: SyncResponse.Head[]
    more: boolean
    answersRanges: boolean
  }

  export namespace Heads {
    let _codec: Codec<Heads>

    export const codec = (): Codec<Heads> => {
      if (_codec == null) {
        _codec = message<Heads>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if (obj.heads != null) {
            for (const value of obj.heads) {
              w.uint32(10)
              SyncResponse.Head.codec().encode(value, w)
            }
          }

          if ((obj.more != null && obj.more !== false)) {
            w.uint32(80)
            w.bool(obj.more)
          }

          if ((obj.answersRanges != null && obj.answersRanges !== false)) {
            w.uint32(88)
            w.bool(obj.answersRanges)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            heads: [],
            more: false,
            answersRanges: false
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                if (opts.limits?.heads != null && obj.heads.length === opts.limits.heads) {
                  throw new MaxLengthError('Decode error - map field "heads" had too many elements')
                }

                if (obj.heads.length === 10000) {
                  throw new MaxLengthError('Decode error - repeated field "heads" had too many elements')
                }

                obj.heads.push(SyncResponse.Head.codec().decode(reader, reader.uint32(), {
                  limits: opts.limits?.heads$
                }))
                break
              }
              case 10: {
                obj.more = reader.bool()
                break
              }
              case 11: {
                obj.answersRanges = reader.bool()
                break
              }
              default: {
                reader.skipType(tag & 7)
                break
              }
            }
          }

          return obj
        })
      }

      return _codec
    }

    export const encode = (obj: Partial<Heads>): Uint8Array => {
      return encodeMessage(obj, Heads.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Heads>): Heads => {
      return decodeMessage(buf, Heads.codec(), opts)
    }
  }

  export interface Entries {
    entries: Uint8Array[]
    more: boolean
  }

  export namespace Entries {
    let _codec: Codec<Entries>

    export const codec = (): Codec<Entries> => {
      if (_codec == null) {
        _codec = message<Entries>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if (obj.entries != null) {
            for (const value of obj.entries) {
              w.uint32(10)
              w.bytes(value)
            }
          }

          if ((obj.more != null && obj.more !== false)) {
            w.uint32(16)
            w.bool(obj.more)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            entries: [],
            more: false
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                if (opts.limits?.entries != null && obj.entries.length === opts.limits.entries) {
                  throw new MaxLengthError('Decode error - map field "entries" had too many elements')
                }

                if (obj.entries.length === 1024) {
                  throw new MaxLengthError('Decode error - repeated field "entries" had too many elements')
                }

                obj.entries.push(reader.bytes())
                break
              }
              case 2: {
                obj.more = reader.bool()
                break
              }
              default: {
                reader.skipType(tag & 7)
                break
              }
            }
          }

          return obj
        })
      }

      return _codec
    }

    export const encode = (obj: Partial<Entries>): Uint8Array => {
      return encodeMessage(obj, Entries.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Entries>): Entries => {
      return decodeMessage(buf, Entries.codec(), opts)
    }
  }

  export interface Ranges {
    ranges: SyncResponse.Entries[]
  }

  export namespace Ranges {
    let _codec: Codec<Ranges>

    export const codec = (): Codec<Ranges> => {
      if (_codec == null) {
        _codec = message<Ranges>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if (obj.ranges != null) {
            for (const value of obj.ranges) {
              w.uint32(10)
              SyncResponse.Entries.codec().encode(value, w)
            }
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            ranges: []
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                if (opts.limits?.ranges != null && obj.ranges.length === opts.limits.ranges) {
                  throw new MaxLengthError('Decode error - map field "ranges" had too many elements')
                }

                if (obj.ranges.length === 64) {
                  throw new MaxLengthError('Decode error - repeated field "ranges" had too many elements')
                }

                obj.ranges.push(SyncResponse.Entries.codec().decode(reader, reader.uint32(), {
                  limits: opts.limits?.ranges$
                }))
                break
              }
              default: {
                reader.skipType(tag & 7)
                break
              }
            }
          }

          return obj
        })
      }

      return _codec
    }

    export const encode = (obj: Partial<Ranges>): Uint8Array => {
      return encodeMessage(obj, Ranges.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Ranges>): Ranges => {
      return decodeMessage(buf, Ranges.codec(), opts)
    }
  }

  let _codec: Codec<SyncResponse>

  export const codec = (): Codec<SyncResponse> => {
    if (_codec == null) {
      _codec = message<SyncResponse>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        obj = { ...obj }

        if (obj.ranges != null) {
          obj.entries = undefined
          obj.heads = undefined
        }

        if (obj.entries != null) {
          obj.ranges = undefined
          obj.heads = undefined
        }

        if (obj.heads != null) {
          obj.ranges = undefined
          obj.entries = undefined
        }

        if (obj.heads != null) {
          w.uint32(10)
          SyncResponse.Heads.codec().encode(obj.heads, w)
        }

        if (obj.entries != null) {
          w.uint32(18)
          SyncResponse.Entries.codec().encode(obj.entries, w)
        }

        if (obj.ranges != null) {
          w.uint32(26)
          SyncResponse.Ranges.codec().encode(obj.ranges, w)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {}

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.heads = SyncResponse.Heads.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.heads
              })
              break
            }
            case 2: {
              obj.entries = SyncResponse.Entries.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.entries
              })
              break
            }
            case 3: {
              obj.ranges = SyncResponse.Ranges.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.ranges
              })
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        if (obj.ranges != null) {
          delete obj.entries
          delete obj.heads
        }

        if (obj.entries != null) {
          delete obj.ranges
          delete obj.heads
        }

        if (obj.heads != null) {
          delete obj.ranges
          delete obj.entries
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<SyncResponse>): Uint8Array => {
    return encodeMessage(obj, SyncResponse.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<SyncResponse>): SyncResponse => {
    return decodeMessage(buf, SyncResponse.codec(), opts)
  }
}
