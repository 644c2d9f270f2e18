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

export interface ServeFrame {
  request?: ServeFrame.Request
  body?: ServeFrame.Body
  end?: ServeFrame.End
  response?: ServeFrame.Response
  error?: ServeFrame.Error
}

export namespace ServeFrame {
  export interface Header {
    name: string
    value: string
  }

  export namespace Header {
    let _codec: Codec<Header>

    export const codec = (): Codec<Header> => {
      if (_codec == null) {
        _codec = message<Header>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.name != null && obj.name !== '')) {
            w.uint32(10)
            w.string(obj.name)
          }

          if ((obj.value != null && obj.value !== '')) {
            w.uint32(18)
            w.string(obj.value)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            name: '',
            value: ''
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
                obj.value = reader.string()
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

    export const encode = (obj: Partial<Header>): Uint8Array => {
      return encodeMessage(obj, Header.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Header>): Header => {
      return decodeMessage(buf, Header.codec(), opts)
    }
  }

  export interface Request {
    leaseId: Uint8Array
    method: string
    path: string
    headers: ServeFrame.Header[]
  }

  export namespace Request {
    let _codec: Codec<Request>

    export const codec = (): Codec<Request> => {
      if (_codec == null) {
        _codec = message<Request>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.leaseId != null && obj.leaseId.byteLength > 0)) {
            w.uint32(10)
            w.bytes(obj.leaseId)
          }

          if ((obj.method != null && obj.method !== '')) {
            w.uint32(18)
            w.string(obj.method)
          }

          if ((obj.path != null && obj.path !== '')) {
            w.uint32(26)
            w.string(obj.path)
          }

          if (obj.headers != null) {
            for (const value of obj.headers) {
              w.uint32(34)
              ServeFrame.Header.codec().encode(value, w)
            }
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            leaseId: EMPTY_BYTES,
            method: '',
            path: '',
            headers: []
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
                obj.method = reader.string()
                break
              }
              case 3: {
                obj.path = reader.string()
                break
              }
              case 4: {
                if (opts.limits?.headers != null && obj.headers.length === opts.limits.headers) {
                  throw new MaxLengthError('Decode error - map field "headers" had too many elements')
                }

                if (obj.headers.length === 128) {
                  throw new MaxLengthError('Decode error - repeated field "headers" had too many elements')
                }

                obj.headers.push(ServeFrame.Header.codec().decode(reader, reader.uint32(), {
                  limits: opts.limits?.headers$
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

    export const encode = (obj: Partial<Request>): Uint8Array => {
      return encodeMessage(obj, Request.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Request>): Request => {
      return decodeMessage(buf, Request.codec(), opts)
    }
  }

  export interface Response {
    status: number
    headers: ServeFrame.Header[]
    draining: boolean
  }

  export namespace Response {
    let _codec: Codec<Response>

    export const codec = (): Codec<Response> => {
      if (_codec == null) {
        _codec = message<Response>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.status != null && obj.status !== 0)) {
            w.uint32(8)
            w.uint32(obj.status)
          }

          if (obj.headers != null) {
            for (const value of obj.headers) {
              w.uint32(18)
              ServeFrame.Header.codec().encode(value, w)
            }
          }

          if ((obj.draining != null && obj.draining !== false)) {
            w.uint32(24)
            w.bool(obj.draining)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            status: 0,
            headers: [],
            draining: false
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.status = reader.uint32()
                break
              }
              case 2: {
                if (opts.limits?.headers != null && obj.headers.length === opts.limits.headers) {
                  throw new MaxLengthError('Decode error - map field "headers" had too many elements')
                }

                if (obj.headers.length === 128) {
                  throw new MaxLengthError('Decode error - repeated field "headers" had too many elements')
                }

                obj.headers.push(ServeFrame.Header.codec().decode(reader, reader.uint32(), {
                  limits: opts.limits?.headers$
                }))
                break
              }
              case 3: {
                obj.draining = reader.bool()
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

    export const encode = (obj: Partial<Response>): Uint8Array => {
      return encodeMessage(obj, Response.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Response>): Response => {
      return decodeMessage(buf, Response.codec(), opts)
    }
  }

  export interface Body {
    data: Uint8Array
  }

  export namespace Body {
    let _codec: Codec<Body>

    export const codec = (): Codec<Body> => {
      if (_codec == null) {
        _codec = message<Body>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.data != null && obj.data.byteLength > 0)) {
            w.uint32(10)
            w.bytes(obj.data)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            data: EMPTY_BYTES
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.data = reader.bytes()
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

    export const encode = (obj: Partial<Body>): Uint8Array => {
      return encodeMessage(obj, Body.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Body>): Body => {
      return decodeMessage(buf, Body.codec(), opts)
    }
  }

  export interface End {}

  export namespace End {
    let _codec: Codec<End>

    export const codec = (): Codec<End> => {
      if (_codec == null) {
        _codec = message<End>((obj, w, opts = {}) => {
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

    export const encode = (obj: Partial<End>): Uint8Array => {
      return encodeMessage(obj, End.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<End>): End => {
      return decodeMessage(buf, End.codec(), opts)
    }
  }

  export interface Error {
    code: ServeFrame.Error.Code
    message: string
  }

  export namespace Error {
    export enum Code {
      CODE_UNSPECIFIED = 'CODE_UNSPECIFIED',
      NO_LEASE = 'NO_LEASE',
      DRAINING = 'DRAINING',
      OVERLOADED = 'OVERLOADED',
      UPSTREAM = 'UPSTREAM',
      TOO_LARGE = 'TOO_LARGE',
      TIMEOUT = 'TIMEOUT',
      PROTOCOL = 'PROTOCOL'
    }

    enum __CodeValues {
      CODE_UNSPECIFIED = 0,
      NO_LEASE = 1,
      DRAINING = 2,
      OVERLOADED = 3,
      UPSTREAM = 4,
      TOO_LARGE = 5,
      TIMEOUT = 6,
      PROTOCOL = 7
    }

    export namespace Code {
      let _codec: Codec<Code> | undefined
      export const codec = (): Codec<Code> => {
        return (_codec ??= enumeration<Code>(__CodeValues))
      }
    }

    let _codec: Codec<Error>

    export const codec = (): Codec<Error> => {
      if (_codec == null) {
        _codec = message<Error>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if (obj.code != null && __CodeValues[obj.code] !== 0) {
            w.uint32(8)
            ServeFrame.Error.Code.codec().encode(obj.code, w)
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
                obj.code = ServeFrame.Error.Code.codec().decode(reader)
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

    export const encode = (obj: Partial<Error>): Uint8Array => {
      return encodeMessage(obj, Error.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Error>): Error => {
      return decodeMessage(buf, Error.codec(), opts)
    }
  }

  let _codec: Codec<ServeFrame>

  export const codec = (): Codec<ServeFrame> => {
    if (_codec == null) {
      _codec = message<ServeFrame>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        obj = { ...obj }

        if (obj.error != null) {
          obj.response = undefined
          obj.end = undefined
          obj.body = undefined
          obj.request = undefined
        }

        if (obj.response != null) {
          obj.error = undefined
          obj.end = undefined
          obj.body = undefined
          obj.request = undefined
        }

        if (obj.end != null) {
          obj.error = undefined
          obj.response = undefined
          obj.body = undefined
          obj.request = undefined
        }

        if (obj.body != null) {
          obj.error = undefined
          obj.response = undefined
          obj.end = undefined
          obj.request = undefined
        }

        if (obj.request != null) {
          obj.error = undefined
          obj.response = undefined
          obj.end = undefined
          obj.body = undefined
        }

        if (obj.request != null) {
          w.uint32(10)
          ServeFrame.Request.codec().encode(obj.request, w)
        }

        if (obj.body != null) {
          w.uint32(18)
          ServeFrame.Body.codec().encode(obj.body, w)
        }

        if (obj.end != null) {
          w.uint32(26)
          ServeFrame.End.codec().encode(obj.end, w)
        }

        if (obj.response != null) {
          w.uint32(34)
          ServeFrame.Response.codec().encode(obj.response, w)
        }

        if (obj.error != null) {
          w.uint32(42)
          ServeFrame.Error.codec().encode(obj.error, w)
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
              obj.request = ServeFrame.Request.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.request
              })
              break
            }
            case 2: {
              obj.body = ServeFrame.Body.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.body
              })
              break
            }
            case 3: {
              obj.end = ServeFrame.End.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.end
              })
              break
            }
            case 4: {
              obj.response = ServeFrame.Response.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.response
              })
              break
            }
            case 5: {
              obj.error = ServeFrame.Error.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.error
              })
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        if (obj.error != null) {
          delete obj.response
          delete obj.end
          delete obj.body
          delete obj.request
        }

        if (obj.response != null) {
          delete obj.error
          delete obj.end
          delete obj.body
          delete obj.request
        }

        if (obj.end != null) {
          delete obj.error
          delete obj.response
          delete obj.body
          delete obj.request
        }

        if (obj.body != null) {
          delete obj.error
          delete obj.response
          delete obj.end
          delete obj.request
        }

        if (obj.request != null) {
          delete obj.error
          delete obj.response
          delete obj.end
          delete obj.body
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<ServeFrame>): Uint8Array => {
    return encodeMessage(obj, ServeFrame.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<ServeFrame>): ServeFrame => {
    return decodeMessage(buf, ServeFrame.codec(), opts)
  }
}
