/* eslint-disable import/export */
/* eslint-disable complexity */
/* eslint-disable @typescript-eslint/no-namespace */
/* eslint-disable @typescript-eslint/no-unnecessary-boolean-literal-compare */
/* eslint-disable @typescript-eslint/no-empty-interface */
/* eslint-disable import/consistent-type-specifier-style */
/* eslint-disable @typescript-eslint/no-unused-vars */

import { EMPTY_BYTES } from './empty-bytes.js'
import { decodeMessage, encodeMessage, enumeration, message } from 'protons-runtime'
import type { Codec, DecodeOptions } from 'protons-runtime'
import type { Uint8ArrayList } from 'uint8arraylist'

export interface UsageStatement {
  leaseId: Uint8Array
  provider: Uint8Array
  renter: Uint8Array
  intervalStart: bigint
  intervalEnd: bigint
  requests: bigint
  gpuMs: bigint
  bytesIn: bigint
  bytesOut: bigint
  priceMicroUsdPerGpuHour: bigint
  amountMicroUsd: bigint
}

export namespace UsageStatement {
  let _codec: Codec<UsageStatement>

  export const codec = (): Codec<UsageStatement> => {
    if (_codec == null) {
      _codec = message<UsageStatement>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.leaseId != null && obj.leaseId.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.leaseId)
        }

        if ((obj.provider != null && obj.provider.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.provider)
        }

        if ((obj.renter != null && obj.renter.byteLength > 0)) {
          w.uint32(26)
          w.bytes(obj.renter)
        }

        if ((obj.intervalStart != null && obj.intervalStart !== 0n)) {
          w.uint32(32)
          w.uint64(obj.intervalStart)
        }

        if ((obj.intervalEnd != null && obj.intervalEnd !== 0n)) {
          w.uint32(40)
          w.uint64(obj.intervalEnd)
        }

        if ((obj.requests != null && obj.requests !== 0n)) {
          w.uint32(48)
          w.uint64(obj.requests)
        }

        if ((obj.gpuMs != null && obj.gpuMs !== 0n)) {
          w.uint32(56)
          w.uint64(obj.gpuMs)
        }

        if ((obj.bytesIn != null && obj.bytesIn !== 0n)) {
          w.uint32(64)
          w.uint64(obj.bytesIn)
        }

        if ((obj.bytesOut != null && obj.bytesOut !== 0n)) {
          w.uint32(72)
          w.uint64(obj.bytesOut)
        }

        if ((obj.priceMicroUsdPerGpuHour != null && obj.priceMicroUsdPerGpuHour !== 0n)) {
          w.uint32(80)
          w.uint64(obj.priceMicroUsdPerGpuHour)
        }

        if ((obj.amountMicroUsd != null && obj.amountMicroUsd !== 0n)) {
          w.uint32(88)
          w.uint64(obj.amountMicroUsd)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          leaseId: EMPTY_BYTES,
          provider: EMPTY_BYTES,
          renter: EMPTY_BYTES,
          intervalStart: 0n,
          intervalEnd: 0n,
          requests: 0n,
          gpuMs: 0n,
          bytesIn: 0n,
          bytesOut: 0n,
          priceMicroUsdPerGpuHour: 0n,
          amountMicroUsd: 0n
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.leaseId = reader.bytes()
              break
            }
            case 2: {
              obj.provider = reader.bytes()
              break
            }
            case 3: {
              obj.renter = reader.bytes()
              break
            }
            case 4: {
              obj.intervalStart = reader.uint64()
              break
            }
            case 5: {
              obj.intervalEnd = reader.uint64()
              break
            }
            case 6: {
              obj.requests = reader.uint64()
              break
            }
            case 7: {
              obj.gpuMs = reader.uint64()
              break
            }
            case 8: {
              obj.bytesIn = reader.uint64()
              break
            }
            case 9: {
              obj.bytesOut = reader.uint64()
              break
            }
            case 10: {
              obj.priceMicroUsdPerGpuHour = reader.uint64()
              break
            }
            case 11: {
              obj.amountMicroUsd = reader.uint64()
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

  export const encode = (obj: Partial<UsageStatement>): Uint8Array => {
    return encodeMessage(obj, UsageStatement.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<UsageStatement>): UsageStatement => {
    return decodeMessage(buf, UsageStatement.codec(), opts)
  }
}

export interface CoSignedUsage {
  statement: Uint8Array
  providerSignature: Uint8Array
  renterSignature: Uint8Array
}

export namespace CoSignedUsage {
  let _codec: Codec<CoSignedUsage>

  export const codec = (): Codec<CoSignedUsage> => {
    if (_codec == null) {
      _codec = message<CoSignedUsage>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.statement != null && obj.statement.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.statement)
        }

        if ((obj.providerSignature != null && obj.providerSignature.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.providerSignature)
        }

        if ((obj.renterSignature != null && obj.renterSignature.byteLength > 0)) {
          w.uint32(26)
          w.bytes(obj.renterSignature)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          statement: EMPTY_BYTES,
          providerSignature: EMPTY_BYTES,
          renterSignature: EMPTY_BYTES
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.statement = reader.bytes()
              break
            }
            case 2: {
              obj.providerSignature = reader.bytes()
              break
            }
            case 3: {
              obj.renterSignature = reader.bytes()
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

  export const encode = (obj: Partial<CoSignedUsage>): Uint8Array => {
    return encodeMessage(obj, CoSignedUsage.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<CoSignedUsage>): CoSignedUsage => {
    return decodeMessage(buf, CoSignedUsage.codec(), opts)
  }
}

export interface UsageFrame {
  proposal?: UsageFrame.Proposal
  countersigned?: UsageFrame.Countersigned
  signed?: CoSignedUsage
  recorded?: UsageFrame.Recorded
  refused?: UsageFrame.Refused
}

export namespace UsageFrame {
  export interface Proposal {
    statement: Uint8Array
  }

  export namespace Proposal {
    let _codec: Codec<Proposal>

    export const codec = (): Codec<Proposal> => {
      if (_codec == null) {
        _codec = message<Proposal>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.statement != null && obj.statement.byteLength > 0)) {
            w.uint32(10)
            w.bytes(obj.statement)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            statement: EMPTY_BYTES
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.statement = reader.bytes()
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

    export const encode = (obj: Partial<Proposal>): Uint8Array => {
      return encodeMessage(obj, Proposal.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Proposal>): Proposal => {
      return decodeMessage(buf, Proposal.codec(), opts)
    }
  }

  export interface Countersigned {
    statement: Uint8Array
    renterSignature: Uint8Array
  }

  export namespace Countersigned {
    let _codec: Codec<Countersigned>

    export const codec = (): Codec<Countersigned> => {
      if (_codec == null) {
        _codec = message<Countersigned>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.statement != null && obj.statement.byteLength > 0)) {
            w.uint32(10)
            w.bytes(obj.statement)
          }

          if ((obj.renterSignature != null && obj.renterSignature.byteLength > 0)) {
            w.uint32(18)
            w.bytes(obj.renterSignature)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            statement: EMPTY_BYTES,
            renterSignature: EMPTY_BYTES
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.statement = reader.bytes()
                break
              }
              case 2: {
                obj.renterSignature = reader.bytes()
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

    export const encode = (obj: Partial<Countersigned>): Uint8Array => {
      return encodeMessage(obj, Countersigned.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Countersigned>): Countersigned => {
      return decodeMessage(buf, Countersigned.codec(), opts)
    }
  }

  export interface Recorded {}

  export namespace Recorded {
    let _codec: Codec<Recorded>

    export const codec = (): Codec<Recorded> => {
      if (_codec == null) {
        _codec = message<Recorded>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
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

    export const encode = (obj: Partial<Recorded>): Uint8Array => {
      return encodeMessage(obj, Recorded.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Recorded>): Recorded => {
      return decodeMessage(buf, Recorded.codec(), opts)
    }
  }

  export interface Refused {
    code: UsageFrame.Refused.Code
    message: string
  }

  export namespace Refused {
    export enum Code {
      CODE_UNSPECIFIED = 'CODE_UNSPECIFIED',
      BAD_STATEMENT = 'BAD_STATEMENT',
      NO_LEASE = 'NO_LEASE',
      OVERLAP = 'OVERLAP',
      BAD_SIGNATURE = 'BAD_SIGNATURE',
      NOT_COUNTERSIGNED = 'NOT_COUNTERSIGNED',
      PROTOCOL = 'PROTOCOL'
    }

    enum __CodeValues {
      CODE_UNSPECIFIED = 0,
      BAD_STATEMENT = 1,
      NO_LEASE = 2,
      OVERLAP = 3,
      BAD_SIGNATURE = 4,
      NOT_COUNTERSIGNED = 5,
      PROTOCOL = 6
    }

    export namespace Code {
      let _codec: Codec<Code> | undefined
      export const codec = (): Codec<Code> => {
        return (_codec ??= enumeration<Code>(__CodeValues))
      }
    }

    let _codec: Codec<Refused>

    export const codec = (): Codec<Refused> => {
      if (_codec == null) {
        _codec = message<Refused>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if (obj.code != null && __CodeValues[obj.code] !== 0) {
            w.uint32(8)
            UsageFrame.Refused.Code.codec().encode(obj.code, w)
          }

          if ((obj.message != null && obj.message !== '')) {
            w.uint32(18)
            w.string(obj.message)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            code: Code.CODE_UNSPECIFIED,
            message: ''
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.code = UsageFrame.Refused.Code.codec().decode(reader)
                break
              }
              case 2: {
                obj.message = reader.string()
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

    export const encode = (obj: Partial<Refused>): Uint8Array => {
      return encodeMessage(obj, Refused.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Refused>): Refused => {
      return decodeMessage(buf, Refused.codec(), opts)
    }
  }

  let _codec: Codec<UsageFrame>

  export const codec = (): Codec<UsageFrame> => {
    if (_codec == null) {
      _codec = message<UsageFrame>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        obj = { ...obj }

        if (obj.refused != null) {
          obj.recorded = undefined
          obj.signed = undefined
          obj.countersigned = undefined
          obj.proposal = undefined
        }

        if (obj.recorded != null) {
          obj.refused = undefined
          obj.signed = undefined
          obj.countersigned = undefined
          obj.proposal = undefined
        }

        if (obj.signed != null) {
          obj.refused = undefined
          obj.recorded = undefined
          obj.countersigned = undefined
          obj.proposal = undefined
        }

        if (obj.countersigned != null) {
          obj.refused = undefined
          obj.recorded = undefined
          obj.signed = undefined
          obj.proposal = undefined
        }

        if (obj.proposal != null) {
          obj.refused = undefined
          obj.recorded = undefined
          obj.signed = undefined
          obj.countersigned = undefined
        }

        if (obj.proposal != null) {
          w.uint32(10)
          UsageFrame.Proposal.codec().encode(obj.proposal, w)
        }

        if (obj.countersigned != null) {
          w.uint32(18)
          UsageFrame.Countersigned.codec().encode(obj.countersigned, w)
        }

        if (obj.signed != null) {
          w.uint32(26)
          CoSignedUsage.codec().encode(obj.signed, w)
        }

        if (obj.recorded != null) {
          w.uint32(34)
          UsageFrame.Recorded.codec().encode(obj.recorded, w)
        }

        if (obj.refused != null) {
          w.uint32(42)
          UsageFrame.Refused.codec().encode(obj.refused, w)
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
              obj.proposal = UsageFrame.Proposal.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.proposal
              })
              break
            }
            case 2: {
              obj.countersigned = UsageFrame.Countersigned.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.countersigned
              })
              break
            }
            case 3: {
              obj.signed = CoSignedUsage.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.signed
              })
              break
            }
            case 4: {
              obj.recorded = UsageFrame.Recorded.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.recorded
              })
              break
            }
            case 5: {
              obj.refused = UsageFrame.Refused.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.refused
              })
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        if (obj.refused != null) {
          delete obj.recorded
          delete obj.signed
          delete obj.countersigned
          delete obj.proposal
        }

        if (obj.recorded != null) {
          delete obj.refused
          delete obj.signed
          delete obj.countersigned
          delete obj.proposal
        }

        if (obj.signed != null) {
          delete obj.refused
          delete obj.recorded
          delete obj.countersigned
          delete obj.proposal
        }

        if (obj.countersigned != null) {
          delete obj.refused
          delete obj.recorded
          delete obj.signed
          delete obj.proposal
        }

        if (obj.proposal != null) {
          delete obj.refused
          delete obj.recorded
          delete obj.signed
          delete obj.countersigned
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<UsageFrame>): Uint8Array => {
    return encodeMessage(obj, UsageFrame.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<UsageFrame>): UsageFrame => {
    return decodeMessage(buf, UsageFrame.codec(), opts)
  }
}
