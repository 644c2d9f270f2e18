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

export interface KadMessage {
  type: KadMessage.MessageType
  key: Uint8Array
  closerPeers: KadMessage.Peer[]
  providerPeers: KadMessage.Peer[]
}

export namespace KadMessage {
  export enum MessageType {
    PUT_VALUE = 'PUT_VALUE',
    GET_VALUE = 'GET_VALUE',
    ADD_PROVIDER = 'ADD_PROVIDER',
    GET_PROVIDERS = 'GET_PROVIDERS',
    FIND_NODE = 'FIND_NODE',
    PING = 'PING'
  }

  enum __MessageTypeValues {
    PUT_VALUE = 0,
    GET_VALUE = 1,
    ADD_PROVIDER = 2,
    GET_PROVIDERS = 3,
    FIND_NODE = 4,
    PING = 5
  }

  export namespace MessageType {
    let _codec: Codec<MessageType> | undefined
    export const codec = (): Codec<MessageType> => {
      return (_codec ??= enumeration<MessageType>(__MessageTypeValues))
    }
  }

  export interface Peer {
    id: Uint8Array
    addrs: Uint8Array[]
  }

  export namespace Peer {
    let _codec: Codec<Peer>

    export const codec = (): Codec<Peer> => {
      if (_codec == null) {
        _codec = message<Peer>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.id != null && obj.id.byteLength > 0)) {
            w.uint32(10)
            w.bytes(obj.id)
          }

          if (obj.addrs != null) {
            for (const value of obj.addrs) {
              w.uint32(18)
              w.bytes(value)
            }
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            id: EMPTY_BYTES,
            addrs: []
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.id = reader.bytes()
                break
              }
              case 2: {
                if (opts.limits?.addrs != null && obj.addrs.length === opts.limits.addrs) {
                  throw new MaxLengthError('Decode error - map field "addrs" had too many elements')
                }

                if (obj.addrs.length === 32) {
                  throw new MaxLengthError('Decode error - repeated field "addrs" had too many elements')
                }

                obj.addrs.push(reader.bytes())
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

    export const encode = (obj: Partial<Peer>): Uint8Array => {
      return encodeMessage(obj, Peer.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Peer>): Peer => {
      return decodeMessage(buf, Peer.codec(), opts)
    }
  }

  let _codec: Codec<KadMessage>

  export const codec = (): Codec<KadMessage> => {
    if (_codec == null) {
      _codec = message<KadMessage>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if (obj.type != null && __MessageTypeValues[obj.type] !== 0) {
          w.uint32(8)
          KadMessage.MessageType.codec().encode(obj.type, w)
        }

        if ((obj.key != null && obj.key.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.key)
        }

        if (obj.closerPeers != null) {
          for (const value of obj.closerPeers) {
            w.uint32(66)
            KadMessage.Peer.codec().encode(value, w)
          }
        }

        if (obj.providerPeers != null) {
          for (const value of obj.providerPeers) {
            w.uint32(74)
            KadMessage.Peer.codec().encode(value, w)
          }
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          type: MessageType.PUT_VALUE,
          key: EMPTY_BYTES,
          closerPeers: [],
          providerPeers: []
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.type = KadMessage.MessageType.codec().decode(reader)
              break
            }
            case 2: {
              obj.key = reader.bytes()
              break
            }
            case 8: {
              if (opts.limits?.closerPeers != null && obj.closerPeers.length === opts.limits.closerPeers) {
                throw new MaxLengthError('Decode error - map field "closerPeers" had too many elements')
              }

              if (obj.closerPeers.length === 64) {
                throw new MaxLengthError('Decode error - repeated field "closerPeers" had too many elements')
              }

              obj.closerPeers.push(KadMessage.Peer.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.closerPeers$
              }))
              break
            }
            case 9: {
              if (opts.limits?.providerPeers != null && obj.providerPeers.length === opts.limits.providerPeers) {
                throw new MaxLengthError('Decode error - map field "providerPeers" had too many elements')
              }

              if (obj.providerPeers.length === 256) {
                throw new MaxLengthError('Decode error - repeated field "providerPeers" had too many elements')
              }

              obj.providerPeers.push(KadMessage.Peer.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.providerPeers$
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

  export const encode = (obj: Partial<KadMessage>): Uint8Array => {
    return encodeMessage(obj, KadMessage.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<KadMessage>): KadMessage => {
    return decodeMessage(buf, KadMessage.codec(), opts)
  }
}
