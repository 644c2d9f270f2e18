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

export interface Heartbeat {
  role: Heartbeat.Role
  seq: bigint
  sentAt: bigint
  expiresAt: bigint
  slotsTotal: number
  slotsBusy: number
  ledgerSeq: bigint
  relayedHeads: FeedHead[]
}

export namespace Heartbeat {
  export enum Role {
    ROLE_UNSPECIFIED = 'ROLE_UNSPECIFIED',
    BOOTSTRAP = 'BOOTSTRAP',
    PROVIDER = 'PROVIDER',
    RENTER = 'RENTER'
  }

  enum __RoleValues {
    ROLE_UNSPECIFIED = 0,
    BOOTSTRAP = 1,
    PROVIDER = 2,
    RENTER = 3
  }

  export namespace Role {
    let _codec: Codec<Role> | undefined
    export const codec = (): Codec<Role> => {
      return (_codec ??= enumeration<Role>(__RoleValues))
    }
  }

  let _codec: Codec<Heartbeat>

  export const codec = (): Codec<Heartbeat> => {
    if (_codec == null) {
      _codec = message<Heartbeat>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if (obj.role != null && __RoleValues[obj.role] !== 0) {
          w.uint32(8)
          Heartbeat.Role.codec().encode(obj.role, w)
        }

        if ((obj.seq != null && obj.seq !== 0n)) {
          w.uint32(16)
          w.uint64(obj.seq)
        }

        if ((obj.sentAt != null && obj.sentAt !== 0n)) {
          w.uint32(24)
          w.uint64(obj.sentAt)
        }

        if ((obj.expiresAt != null && obj.expiresAt !== 0n)) {
          w.uint32(32)
          w.uint64(obj.expiresAt)
        }

        if ((obj.slotsTotal != null && obj.slotsTotal !== 0)) {
          w.uint32(40)
          w.uint32(obj.slotsTotal)
        }

        if ((obj.slotsBusy != null && obj.slotsBusy !== 0)) {
          w.uint32(48)
          w.uint32(obj.slotsBusy)
        }

        if ((obj.ledgerSeq != null && obj.ledgerSeq !== 0n)) {
          w.uint32(56)
          w.uint64(obj.ledgerSeq)
        }

        if (obj.relayedHeads != null) {
          for (const value of obj.relayedHeads) {
            w.uint32(66)
            FeedHead.codec().encode(value, w)
          }
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          role: Role.ROLE_UNSPECIFIED,
          seq: 0n,
          sentAt: 0n,
          expiresAt: 0n,
          slotsTotal: 0,
          slotsBusy: 0,
          ledgerSeq: 0n,
          relayedHeads: []
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.role = Heartbeat.Role.codec().decode(reader)
              break
            }
            case 2: {
              obj.seq = reader.uint64()
              break
            }
            case 3: {
              obj.sentAt = reader.uint64()
              break
            }
            case 4: {
              obj.expiresAt = reader.uint64()
              break
            }
            case 5: {
              obj.slotsTotal = reader.uint32()
              break
            }
            case 6: {
              obj.slotsBusy = reader.uint32()
              break
            }
            case 7: {
              obj.ledgerSeq = reader.uint64()
              break
            }
            case 8: {
              if (opts.limits?.relayedHeads != null && obj.relayedHeads.length === opts.limits.relayedHeads) {
                throw new MaxLengthError('Decode error - map field "relayedHeads" had too many elements')
              }

              if (obj.relayedHeads.length === 4) {
                throw new MaxLengthError('Decode error - repeated field "relayedHeads" had too many elements')
              }

              obj.relayedHeads.push(FeedHead.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.relayedHeads$
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

  export const encode = (obj: Partial<Heartbeat>): Uint8Array => {
    return encodeMessage(obj, Heartbeat.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Heartbeat>): Heartbeat => {
    return decodeMessage(buf, Heartbeat.codec(), opts)
  }
}

export interface FeedHead {
  author: Uint8Array
  seq: bigint
}

export namespace FeedHead {
  let _codec: Codec<FeedHead>

  export const codec = (): Codec<FeedHead> => {
    if (_codec == null) {
      _codec = message<FeedHead>((obj, w, opts = {}) => {
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

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          author: EMPTY_BYTES,
          seq: 0n
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

  export const encode = (obj: Partial<FeedHead>): Uint8Array => {
    return encodeMessage(obj, FeedHead.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<FeedHead>): FeedHead => {
    return decodeMessage(buf, FeedHead.codec(), opts)
  }
}
