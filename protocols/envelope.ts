/* eslint-disable import/export */
/* eslint-disable complexity */
/* eslint-disable @typescript-eslint/no-namespace */
/* eslint-disable @typescript-eslint/no-unnecessary-boolean-literal-compare */
/* eslint-disable @typescript-eslint/no-empty-interface */
/* eslint-disable import/consistent-type-specifier-style */
/* eslint-disable @typescript-eslint/no-unused-vars */

import { EMPTY_BYTES } from './empty-bytes.js'
import { decodeMessage, encodeMessage, message } from 'protons-runtime'
import type { Codec, DecodeOptions } from 'protons-runtime'
import type { Uint8ArrayList } from 'uint8arraylist'

export interface SignedEnvelope {
  domain: string
  signer: Uint8Array
  payload: Uint8Array
  signature: Uint8Array
}

export namespace SignedEnvelope {
  let _codec: Codec<SignedEnvelope>

  export const codec = (): Codec<SignedEnvelope> => {
    if (_codec == null) {
      _codec = message<SignedEnvelope>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.domain != null && obj.domain !== '')) {
          w.uint32(10)
          w.string(obj.domain)
        }

        if ((obj.signer != null && obj.signer.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.signer)
        }

        if ((obj.payload != null && obj.payload.byteLength > 0)) {
          w.uint32(26)
          w.bytes(obj.payload)
        }

        if ((obj.signature != null && obj.signature.byteLength > 0)) {
          w.uint32(34)
          w.bytes(obj.signature)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          domain: '',
          signer: EMPTY_BYTES,
          payload: EMPTY_BYTES,
          signature: EMPTY_BYTES
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.domain = reader.string()
              break
            }
            case 2: {
              obj.signer = reader.bytes()
              break
            }
            case 3: {
              obj.payload = reader.bytes()
              break
            }
            case 4: {
              obj.signature = reader.bytes()
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

  export const encode = (obj: Partial<SignedEnvelope>): Uint8Array => {
    return encodeMessage(obj, SignedEnvelope.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<SignedEnvelope>): SignedEnvelope => {
    return decodeMessage(buf, SignedEnvelope.codec(), opts)
  }
}
