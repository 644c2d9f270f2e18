/* eslint-disable import/export */
/* eslint-disable complexity */
/* eslint-disable @typescript-eslint/no-namespace */
/* eslint-disable @typescript-eslint/no-unnecessary-boolean-literal-compare */
/* eslint-disable @typescript-eslint/no-empty-interface */
/* eslint-disable import/consistent-type-specifier-style */
/* eslint-disable @typescript-eslint/no-unused-vars */

import { decodeMessage, encodeMessage, MaxLengthError, message } from 'protons-runtime'
import type { Codec, DecodeOptions } from 'protons-runtime'
import type { Uint8ArrayList } from 'uint8arraylist'

export interface TrustList {
  name: string
  sequence: bigint
  issuedAt: bigint
  expiresAt: bigint
  peers: Uint8Array[]
}

export namespace TrustList {
  let _codec: Codec<TrustList>

  export const codec = (): Codec<TrustList> => {
    if (_codec == null) {
      _codec = message<TrustList>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.name != null && obj.name !== '')) {
          w.uint32(10)
          w.string(obj.name)
        }

        if ((obj.sequence != null && obj.sequence !== 0n)) {
          w.uint32(16)
          w.uint64(obj.sequence)
        }

        if ((obj.issuedAt != null && obj.issuedAt !== 0n)) {
          w.uint32(24)
          w.uint64(obj.issuedAt)
        }

        if ((obj.expiresAt != null && obj.expiresAt !== 0n)) {
          w.uint32(32)
          w.uint64(obj.expiresAt)
        }

        if (obj.peers != null) {
          for (const value of obj.peers) {
            w.uint32(42)
            w.bytes(value)
          }
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          name: '',
          sequence: 0n,
          issuedAt: 0n,
          expiresAt: 0n,
          peers: []
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.name = reader.string()
              break
            }
            case 2: {
              obj.sequence = reader.uint64()
              break
            }
            case 3: {
              obj.issuedAt = reader.uint64()
              break
            }
            case 4: {
              obj.expiresAt = reader.uint64()
              break
            }
            case 5: {
              if (opts.limits?.peers != null && obj.peers.length === opts.limits.peers) {
                throw new MaxLengthError('Decode error - map field "peers" had too many elements')
              }

              if (obj.peers.length === 256) {
                throw new MaxLengthError('Decode error - repeated field "peers" had too many elements')
              }

              obj.peers.push(reader.bytes())
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

  export const encode = (obj: Partial<TrustList>): Uint8Array => {
    return encodeMessage(obj, TrustList.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<TrustList>): TrustList => {
    return decodeMessage(buf, TrustList.codec(), opts)
  }
}
