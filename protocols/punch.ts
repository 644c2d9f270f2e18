/* eslint-disable import/export */
/* eslint-disable complexity */
/* eslint-disable @typescript-eslint/no-namespace */
/* eslint-disable @typescript-eslint/no-unnecessary-boolean-literal-compare */
/* eslint-disable @typescript-eslint/no-empty-interface */
/* eslint-disable import/consistent-type-specifier-style */
/* eslint-disable @typescript-eslint/no-unused-vars */

import { decodeMessage, encodeMessage, enumeration, MaxLengthError, message } from 'protons-runtime'
import type { Codec, DecodeOptions } from 'protons-runtime'
import type { Uint8ArrayList } from 'uint8arraylist'

export interface Punch {
  type: Punch.Type
  listenAddrs: Uint8Array[]
  punchAddrs: Uint8Array[]
}

export namespace Punch {
  export enum Type {
    CONNECT = 'CONNECT',
    SYNC = 'SYNC'
  }

  enum __TypeValues {
    CONNECT = 0,
    SYNC = 1
  }

  export namespace Type {
    let _codec: Codec<Type> | undefined
    export const codec = (): Codec<Type> => {
      return (_codec ??= enumeration<Type>(__TypeValues))
    }
  }

  let _codec: Codec<Punch>

  export const codec = (): Codec<Punch> => {
    if (_codec == null) {
      _codec = message<Punch>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if (obj.type != null && __TypeValues[obj.type] !== 0) {
          w.uint32(8)
          Punch.Type.codec().encode(obj.type, w)
        }

        if (obj.listenAddrs != null) {
          for (const value of obj.listenAddrs) {
            w.uint32(18)
            w.bytes(value)
          }
        }

        if (obj.punchAddrs != null) {
          for (const value of obj.punchAddrs) {
            w.uint32(26)
            w.bytes(value)
          }
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          type: Type.CONNECT,
          listenAddrs: [],
          punchAddrs: []
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.type = Punch.Type.codec().decode(reader)
              break
            }
            case 2: {
              if (opts.limits?.listenAddrs != null && obj.listenAddrs.length === opts.limits.listenAddrs) {
                throw new MaxLengthError('Decode error - map field "listenAddrs" had too many elements')
              }

              if (obj.listenAddrs.length === 4) {
                throw new MaxLengthError('Decode error - repeated field "listenAddrs" had too many elements')
              }

              obj.listenAddrs.push(reader.bytes())
              break
            }
            case 3: {
              if (opts.limits?.punchAddrs != null && obj.punchAddrs.length === opts.limits.punchAddrs) {
                throw new MaxLengthError('Decode error - map field "punchAddrs" had too many elements')
              }

              if (obj.punchAddrs.length === 4) {
                throw new MaxLengthError('Decode error - repeated field "punchAddrs" had too many elements')
              }

              obj.punchAddrs.push(reader.bytes())
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

  export const encode = (obj: Partial<Punch>): Uint8Array => {
    return encodeMessage(obj, Punch.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Punch>): Punch => {
    return decodeMessage(buf, Punch.codec(), opts)
  }
}
