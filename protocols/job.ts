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

export enum JobStatus {
  JOB_STATUS_UNSPECIFIED = 'JOB_STATUS_UNSPECIFIED',
  COMPLETED = 'COMPLETED',
  FAILED = 'FAILED',
  TIMEOUT = 'TIMEOUT',
  PREEMPTED = 'PREEMPTED'
}

enum __JobStatusValues {
  JOB_STATUS_UNSPECIFIED = 0,
  COMPLETED = 1,
  FAILED = 2,
  TIMEOUT = 3,
  PREEMPTED = 4
}

export namespace JobStatus {
  let _codec: Codec<JobStatus> | undefined
  export const codec = (): Codec<JobStatus> => {
    return (_codec ??= enumeration<JobStatus>(__JobStatusValues))
  }
}

export interface FileEntry {
  path: string
  size: bigint
  sha256: Uint8Array
  public?: boolean
}

export namespace FileEntry {
  let _codec: Codec<FileEntry>

  export const codec = (): Codec<FileEntry> => {
    if (_codec == null) {
      _codec = message<FileEntry>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.path != null && obj.path !== '')) {
          w.uint32(10)
          w.string(obj.path)
        }

        if ((obj.size != null && obj.size !== 0n)) {
          w.uint32(16)
          w.uint64(obj.size)
        }

        if ((obj.sha256 != null && obj.sha256.byteLength > 0)) {
          w.uint32(26)
          w.bytes(obj.sha256)
        }

        if (obj.public != null) {
          w.uint32(32)
          w.bool(obj.public)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          path: '',
          size: 0n,
          sha256: EMPTY_BYTES
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.path = reader.string()
              break
            }
            case 2: {
              obj.size = reader.uint64()
              break
            }
            case 3: {
              obj.sha256 = reader.bytes()
              break
            }
            case 4: {
              obj.public = reader.bool()
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

  export const encode = (obj: Partial<FileEntry>): Uint8Array => {
    return encodeMessage(obj, FileEntry.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<FileEntry>): FileEntry => {
    return decodeMessage(buf, FileEntry.codec(), opts)
  }
}

export interface JobFrame {
  start?: JobFrame.Start
  inputChunk?: JobFrame.InputChunk
  inputEnd?: JobFrame.InputEnd
  accepted?: JobFrame.Accepted
  rejected?: JobFrame.Rejected
  log?: JobFrame.Log
  outputChunk?: JobFrame.OutputChunk
  result?: JobFrame.Result
  attestation?: Uint8Array
  receipt?: Uint8Array
  error?: JobFrame.Error
  progress?: JobFrame.Progress
  receiptAck?: JobFrame.ReceiptAck
  held?: JobFrame.Held
}

export namespace JobFrame {
  export interface KeyValue {
    key: string
    value: string
  }

  export namespace KeyValue {
    let _codec: Codec<KeyValue>

    export const codec = (): Codec<KeyValue> => {
      if (_codec == null) {
        _codec = message<KeyValue>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.key != null && obj.key !== '')) {
            w.uint32(10)
            w.string(obj.key)
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
            key: '',
            value: ''
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.key = reader.string()
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

    export const encode = (obj: Partial<KeyValue>): Uint8Array => {
      return encodeMessage(obj, KeyValue.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<KeyValue>): KeyValue => {
      return decodeMessage(buf, KeyValue.codec(), opts)
    }
  }

  export interface Runtime {
    image: string
    command: string[]
    env: JobFrame.KeyValue[]
    timeoutMs: bigint
    shmSizeMib: number
  }

  export namespace Runtime {
    let _codec: Codec<Runtime>

    export const codec = (): Codec<Runtime> => {
      if (_codec == null) {
        _codec = message<Runtime>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.image != null && obj.image !== '')) {
            w.uint32(10)
            w.string(obj.image)
          }

          if (obj.command != null) {
            for (const value of obj.command) {
              w.uint32(18)
              w.string(value)
            }
          }

          if (obj.env != null) {
            for (const value of obj.env) {
              w.uint32(26)
              JobFrame.KeyValue.codec().encode(value, w)
            }
          }

          if ((obj.timeoutMs != null && obj.timeoutMs !== 0n)) {
            w.uint32(32)
            w.uint64(obj.timeoutMs)
          }

          if ((obj.shmSizeMib != null && obj.shmSizeMib !== 0)) {
            w.uint32(40)
            w.uint32(obj.shmSizeMib)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            image: '',
            command: [],
            env: [],
            timeoutMs: 0n,
            shmSizeMib: 0
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.image = reader.string()
                break
              }
              case 2: {
                if (opts.limits?.command != null && obj.command.length === opts.limits.command) {
                  throw new MaxLengthError('Decode error - map field "command" had too many elements')
                }

                if (obj.command.length === 256) {
                  throw new MaxLengthError('Decode error - repeated field "command" had too many elements')
                }

                obj.command.push(reader.string())
                break
              }
              case 3: {
                if (opts.limits?.env != null && obj.env.length === opts.limits.env) {
                  throw new MaxLengthError('Decode error - map field "env" had too many elements')
                }

                if (obj.env.length === 128) {
                  throw new MaxLengthError('Decode error - repeated field "env" had too many elements')
                }

                obj.env.push(JobFrame.KeyValue.codec().decode(reader, reader.uint32(), {
                  limits: opts.limits?.env$
                }))
                break
              }
              case 4: {
                obj.timeoutMs = reader.uint64()
                break
              }
              case 5: {
                obj.shmSizeMib = reader.uint32()
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

    export const encode = (obj: Partial<Runtime>): Uint8Array => {
      return encodeMessage(obj, Runtime.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Runtime>): Runtime => {
      return decodeMessage(buf, Runtime.codec(), opts)
    }
  }

  export interface Start {
    award: Uint8Array
    jobRequest: Uint8Array
    runtime?: JobFrame.Runtime
    inputs: FileEntry[]
  }

  export namespace Start {
    let _codec: Codec<Start>

    export const codec = (): Codec<Start> => {
      if (_codec == null) {
        _codec = message<Start>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.award != null && obj.award.byteLength > 0)) {
            w.uint32(10)
            w.bytes(obj.award)
          }

          if ((obj.jobRequest != null && obj.jobRequest.byteLength > 0)) {
            w.uint32(18)
            w.bytes(obj.jobRequest)
          }

          if (obj.runtime != null) {
            w.uint32(26)
            JobFrame.Runtime.codec().encode(obj.runtime, w)
          }

          if (obj.inputs != null) {
            for (const value of obj.inputs) {
              w.uint32(34)
              FileEntry.codec().encode(value, w)
            }
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            award: EMPTY_BYTES,
            jobRequest: EMPTY_BYTES,
            inputs: []
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.award = reader.bytes()
                break
              }
              case 2: {
                obj.jobRequest = reader.bytes()
                break
              }
              case 3: {
                obj.runtime = JobFrame.Runtime.codec().decode(reader, reader.uint32(), {
                  limits: opts.limits?.runtime
                })
                break
              }
              case 4: {
                if (opts.limits?.inputs != null && obj.inputs.length === opts.limits.inputs) {
                  throw new MaxLengthError('Decode error - map field "inputs" had too many elements')
                }

                if (obj.inputs.length === 4096) {
                  throw new MaxLengthError('Decode error - repeated field "inputs" had too many elements')
                }

                obj.inputs.push(FileEntry.codec().decode(reader, reader.uint32(), {
                  limits: opts.limits?.inputs$
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

    export const encode = (obj: Partial<Start>): Uint8Array => {
      return encodeMessage(obj, Start.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Start>): Start => {
      return decodeMessage(buf, Start.codec(), opts)
    }
  }

  export interface InputChunk {
    path: string
    offset: bigint
    data: Uint8Array
  }

  export namespace InputChunk {
    let _codec: Codec<InputChunk>

    export const codec = (): Codec<InputChunk> => {
      if (_codec == null) {
        _codec = message<InputChunk>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.path != null && obj.path !== '')) {
            w.uint32(10)
            w.string(obj.path)
          }

          if ((obj.offset != null && obj.offset !== 0n)) {
            w.uint32(16)
            w.uint64(obj.offset)
          }

          if ((obj.data != null && obj.data.byteLength > 0)) {
            w.uint32(26)
            w.bytes(obj.data)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            path: '',
            offset: 0n,
            data: EMPTY_BYTES
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.path = reader.string()
                break
              }
              case 2: {
                obj.offset = reader.uint64()
                break
              }
              case 3: {
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

    export const encode = (obj: Partial<InputChunk>): Uint8Array => {
      return encodeMessage(obj, InputChunk.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<InputChunk>): InputChunk => {
      return decodeMessage(buf, InputChunk.codec(), opts)
    }
  }

  export interface InputEnd {}

  export namespace InputEnd {
    let _codec: Codec<InputEnd>

    export const codec = (): Codec<InputEnd> => {
      if (_codec == null) {
        _codec = message<InputEnd>((obj, w, opts = {}) => {
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

    export const encode = (obj: Partial<InputEnd>): Uint8Array => {
      return encodeMessage(obj, InputEnd.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<InputEnd>): InputEnd => {
      return decodeMessage(buf, InputEnd.codec(), opts)
    }
  }

  export interface Held {
    sha256: Uint8Array[]
  }

  export namespace Held {
    let _codec: Codec<Held>

    export const codec = (): Codec<Held> => {
      if (_codec == null) {
        _codec = message<Held>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if (obj.sha256 != null) {
            for (const value of obj.sha256) {
              w.uint32(10)
              w.bytes(value)
            }
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            sha256: []
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                if (opts.limits?.sha256 != null && obj.sha256.length === opts.limits.sha256) {
                  throw new MaxLengthError('Decode error - map field "sha256" had too many elements')
                }

                if (obj.sha256.length === 4096) {
                  throw new MaxLengthError('Decode error - repeated field "sha256" had too many elements')
                }

                obj.sha256.push(reader.bytes())
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

    export const encode = (obj: Partial<Held>): Uint8Array => {
      return encodeMessage(obj, Held.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Held>): Held => {
      return decodeMessage(buf, Held.codec(), opts)
    }
  }

  export interface Accepted {
    at: bigint
  }

  export namespace Accepted {
    let _codec: Codec<Accepted>

    export const codec = (): Codec<Accepted> => {
      if (_codec == null) {
        _codec = message<Accepted>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.at != null && obj.at !== 0n)) {
            w.uint32(8)
            w.uint64(obj.at)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            at: 0n
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.at = reader.uint64()
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

    export const encode = (obj: Partial<Accepted>): Uint8Array => {
      return encodeMessage(obj, Accepted.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Accepted>): Accepted => {
      return decodeMessage(buf, Accepted.codec(), opts)
    }
  }

  export interface Rejected {
    code: JobFrame.Rejected.Code
    reason: string
  }

  export namespace Rejected {
    export enum Code {
      CODE_UNSPECIFIED = 'CODE_UNSPECIFIED',
      NOT_AWARDED = 'NOT_AWARDED',
      BAD_AWARD = 'BAD_AWARD',
      NO_CAPACITY = 'NO_CAPACITY',
      POLICY = 'POLICY',
      INPUT_TOO_LARGE = 'INPUT_TOO_LARGE',
      INPUT_MISMATCH = 'INPUT_MISMATCH',
      OTHER = 'OTHER'
    }

    enum __CodeValues {
      CODE_UNSPECIFIED = 0,
      NOT_AWARDED = 1,
      BAD_AWARD = 2,
      NO_CAPACITY = 3,
      POLICY = 4,
      INPUT_TOO_LARGE = 5,
      INPUT_MISMATCH = 6,
      OTHER = 7
    }

    export namespace Code {
      let _codec: Codec<Code> | undefined
      export const codec = (): Codec<Code> => {
        return (_codec ??= enumeration<Code>(__CodeValues))
      }
    }

    let _codec: Codec<Rejected>

    export const codec = (): Codec<Rejected> => {
      if (_codec == null) {
        _codec = message<Rejected>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if (obj.code != null && __CodeValues[obj.code] !== 0) {
            w.uint32(8)
            JobFrame.Rejected.Code.codec().encode(obj.code, w)
          }

          if ((obj.reason != null && obj.reason !== '')) {
            w.uint32(18)
            w.string(obj.reason)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            code: Code.CODE_UNSPECIFIED,
            reason: ''
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.code = JobFrame.Rejected.Code.codec().decode(reader)
                break
              }
              case 2: {
                obj.reason = reader.string()
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

    export const encode = (obj: Partial<Rejected>): Uint8Array => {
      return encodeMessage(obj, Rejected.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Rejected>): Rejected => {
      return decodeMessage(buf, Rejected.codec(), opts)
    }
  }

  export interface Log {
    stream: JobFrame.Log.Stream
    line: string
    at: bigint
  }

  export namespace Log {
    export enum Stream {
      STDOUT = 'STDOUT',
      STDERR = 'STDERR'
    }

    enum __StreamValues {
      STDOUT = 0,
      STDERR = 1
    }

    export namespace Stream {
      let _codec: Codec<Stream> | undefined
      export const codec = (): Codec<Stream> => {
        return (_codec ??= enumeration<Stream>(__StreamValues))
      }
    }

    let _codec: Codec<Log>

    export const codec = (): Codec<Log> => {
      if (_codec == null) {
        _codec = message<Log>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if (obj.stream != null && __StreamValues[obj.stream] !== 0) {
            w.uint32(8)
            JobFrame.Log.Stream.codec().encode(obj.stream, w)
          }

          if ((obj.line != null && obj.line !== '')) {
            w.uint32(18)
            w.string(obj.line)
          }

          if ((obj.at != null && obj.at !== 0n)) {
            w.uint32(24)
            w.uint64(obj.at)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            stream: Stream.STDOUT,
            line: '',
            at: 0n
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.stream = JobFrame.Log.Stream.codec().decode(reader)
                break
              }
              case 2: {
                obj.line = reader.string()
                break
              }
              case 3: {
                obj.at = reader.uint64()
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

    export const encode = (obj: Partial<Log>): Uint8Array => {
      return encodeMessage(obj, Log.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Log>): Log => {
      return decodeMessage(buf, Log.codec(), opts)
    }
  }

  export interface OutputChunk {
    path: string
    offset: bigint
    data: Uint8Array
  }

  export namespace OutputChunk {
    let _codec: Codec<OutputChunk>

    export const codec = (): Codec<OutputChunk> => {
      if (_codec == null) {
        _codec = message<OutputChunk>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.path != null && obj.path !== '')) {
            w.uint32(10)
            w.string(obj.path)
          }

          if ((obj.offset != null && obj.offset !== 0n)) {
            w.uint32(16)
            w.uint64(obj.offset)
          }

          if ((obj.data != null && obj.data.byteLength > 0)) {
            w.uint32(26)
            w.bytes(obj.data)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            path: '',
            offset: 0n,
            data: EMPTY_BYTES
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.path = reader.string()
                break
              }
              case 2: {
                obj.offset = reader.uint64()
                break
              }
              case 3: {
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

    export const encode = (obj: Partial<OutputChunk>): Uint8Array => {
      return encodeMessage(obj, OutputChunk.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<OutputChunk>): OutputChunk => {
      return decodeMessage(buf, OutputChunk.codec(), opts)
    }
  }

  export interface Result {
    status: JobStatus
    exitCode: number
    outputs: FileEntry[]
  }

  export namespace Result {
    let _codec: Codec<Result>

    export const codec = (): Codec<Result> => {
      if (_codec == null) {
        _codec = message<Result>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if (obj.status != null && __JobStatusValues[obj.status] !== 0) {
            w.uint32(8)
            JobStatus.codec().encode(obj.status, w)
          }

          if ((obj.exitCode != null && obj.exitCode !== 0)) {
            w.uint32(16)
            w.sint32(obj.exitCode)
          }

          if (obj.outputs != null) {
            for (const value of obj.outputs) {
              w.uint32(26)
              FileEntry.codec().encode(value, w)
            }
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            status: JobStatus.JOB_STATUS_UNSPECIFIED,
            exitCode: 0,
            outputs: []
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.status = JobStatus.codec().decode(reader)
                break
              }
              case 2: {
                obj.exitCode = reader.sint32()
                break
              }
              case 3: {
                if (opts.limits?.outputs != null && obj.outputs.length === opts.limits.outputs) {
                  throw new MaxLengthError('Decode error - map field "outputs" had too many elements')
                }

                if (obj.outputs.length === 4096) {
                  throw new MaxLengthError('Decode error - repeated field "outputs" had too many elements')
                }

                obj.outputs.push(FileEntry.codec().decode(reader, reader.uint32(), {
                  limits: opts.limits?.outputs$
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

    export const encode = (obj: Partial<Result>): Uint8Array => {
      return encodeMessage(obj, Result.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Result>): Result => {
      return decodeMessage(buf, Result.codec(), opts)
    }
  }

  export interface Error {
    code: JobFrame.Error.Code
    message: string
  }

  export namespace Error {
    export enum Code {
      CODE_UNSPECIFIED = 'CODE_UNSPECIFIED',
      FRAME_TOO_LARGE = 'FRAME_TOO_LARGE',
      INPUT_TOO_LARGE = 'INPUT_TOO_LARGE',
      OUTPUT_TOO_LARGE = 'OUTPUT_TOO_LARGE',
      IDLE_TIMEOUT = 'IDLE_TIMEOUT',
      PROTOCOL = 'PROTOCOL',
      BAD_SIGNATURE = 'BAD_SIGNATURE',
      CANCELLED = 'CANCELLED',
      INTERNAL = 'INTERNAL',
      BAD_ATTESTATION = 'BAD_ATTESTATION',
      BAD_RECEIPT = 'BAD_RECEIPT'
    }

    enum __CodeValues {
      CODE_UNSPECIFIED = 0,
      FRAME_TOO_LARGE = 1,
      INPUT_TOO_LARGE = 2,
      OUTPUT_TOO_LARGE = 3,
      IDLE_TIMEOUT = 4,
      PROTOCOL = 5,
      BAD_SIGNATURE = 6,
      CANCELLED = 7,
      INTERNAL = 8,
      BAD_ATTESTATION = 9,
      BAD_RECEIPT = 10
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
            JobFrame.Error.Code.codec().encode(obj.code, w)
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
                obj.code = JobFrame.Error.Code.codec().decode(reader)
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

  export interface Progress {
    at: bigint
    elapsedMs: bigint
  }

  export namespace Progress {
    let _codec: Codec<Progress>

    export const codec = (): Codec<Progress> => {
      if (_codec == null) {
        _codec = message<Progress>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.at != null && obj.at !== 0n)) {
            w.uint32(8)
            w.uint64(obj.at)
          }

          if ((obj.elapsedMs != null && obj.elapsedMs !== 0n)) {
            w.uint32(16)
            w.uint64(obj.elapsedMs)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            at: 0n,
            elapsedMs: 0n
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.at = reader.uint64()
                break
              }
              case 2: {
                obj.elapsedMs = reader.uint64()
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

    export const encode = (obj: Partial<Progress>): Uint8Array => {
      return encodeMessage(obj, Progress.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Progress>): Progress => {
      return decodeMessage(buf, Progress.codec(), opts)
    }
  }

  export interface ReceiptAck {
    receiptHash: Uint8Array
  }

  export namespace ReceiptAck {
    let _codec: Codec<ReceiptAck>

    export const codec = (): Codec<ReceiptAck> => {
      if (_codec == null) {
        _codec = message<ReceiptAck>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.receiptHash != null && obj.receiptHash.byteLength > 0)) {
            w.uint32(10)
            w.bytes(obj.receiptHash)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            receiptHash: EMPTY_BYTES
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.receiptHash = reader.bytes()
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

    export const encode = (obj: Partial<ReceiptAck>): Uint8Array => {
      return encodeMessage(obj, ReceiptAck.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<ReceiptAck>): ReceiptAck => {
      return decodeMessage(buf, ReceiptAck.codec(), opts)
    }
  }

  let _codec: Codec<JobFrame>

  export const codec = (): Codec<JobFrame> => {
    if (_codec == null) {
      _codec = message<JobFrame>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        obj = { ...obj }

        if (obj.held != null) {
          obj.receiptAck = undefined
          obj.progress = undefined
          obj.error = undefined
          obj.receipt = undefined
          obj.attestation = undefined
          obj.result = undefined
          obj.outputChunk = undefined
          obj.log = undefined
          obj.rejected = undefined
          obj.accepted = undefined
          obj.inputEnd = undefined
          obj.inputChunk = undefined
          obj.start = undefined
        }

        if (obj.receiptAck != null) {
          obj.held = undefined
          obj.progress = undefined
          obj.error = undefined
          obj.receipt = undefined
          obj.attestation = undefined
          obj.result = undefined
          obj.outputChunk = undefined
          obj.log = undefined
          obj.rejected = undefined
          obj.accepted = undefined
          obj.inputEnd = undefined
          obj.inputChunk = undefined
          obj.start = undefined
        }

        if (obj.progress != null) {
          obj.held = undefined
          obj.receiptAck = undefined
          obj.error = undefined
          obj.receipt = undefined
          obj.attestation = undefined
          obj.result = undefined
          obj.outputChunk = undefined
          obj.log = undefined
          obj.rejected = undefined
          obj.accepted = undefined
          obj.inputEnd = undefined
          obj.inputChunk = undefined
          obj.start = undefined
        }

        if (obj.error != null) {
          obj.held = undefined
          obj.receiptAck = undefined
          obj.progress = undefined
          obj.receipt = undefined
          obj.attestation = undefined
          obj.result = undefined
          obj.outputChunk = undefined
          obj.log = undefined
          obj.rejected = undefined
          obj.accepted = undefined
          obj.inputEnd = undefined
          obj.inputChunk = undefined
          obj.start = undefined
        }

        if (obj.receipt != null) {
          obj.held = undefined
          obj.receiptAck = undefined
          obj.progress = undefined
          obj.error = undefined
          obj.attestation = undefined
          obj.result = undefined
          obj.outputChunk = undefined
          obj.log = undefined
          obj.rejected = undefined
          obj.accepted = undefined
          obj.inputEnd = undefined
          obj.inputChunk = undefined
          obj.start = undefined
        }

        if (obj.attestation != null) {
          obj.held = undefined
          obj.receiptAck = undefined
          obj.progress = undefined
          obj.error = undefined
          obj.receipt = undefined
          obj.result = undefined
          obj.outputChunk = undefined
          obj.log = undefined
          obj.rejected = undefined
          obj.accepted = undefined
          obj.inputEnd = undefined
          obj.inputChunk = undefined
          obj.start = undefined
        }

        if (obj.result != null) {
          obj.held = undefined
          obj.receiptAck = undefined
          obj.progress = undefined
          obj.error = undefined
          obj.receipt = undefined
          obj.attestation = undefined
          obj.outputChunk = undefined
          obj.log = undefined
          obj.rejected = undefined
          obj.accepted = undefined
          obj.inputEnd = undefined
          obj.inputChunk = undefined
          obj.start = undefined
        }

        if (obj.outputChunk != null) {
          obj.held = undefined
          obj.receiptAck = undefined
          obj.progress = undefined
          obj.error = undefined
          obj.receipt = undefined
          obj.attestation = undefined
          obj.result = undefined
          obj.log = undefined
          obj.rejected = undefined
          obj.accepted = undefined
          obj.inputEnd = undefined
          obj.inputChunk = undefined
          obj.start = undefined
        }

        if (obj.log != null) {
          obj.held = undefined
          obj.receiptAck = undefined
          obj.progress = undefined
          obj.error = undefined
          obj.receipt = undefined
          obj.attestation = undefined
          obj.result = undefined
          obj.outputChunk = undefined
          obj.rejected = undefined
          obj.accepted = undefined
          obj.inputEnd = undefined
          obj.inputChunk = undefined
          obj.start = undefined
        }

        if (obj.rejected != null) {
          obj.held = undefined
          obj.receiptAck = undefined
          obj.progress = undefined
          obj.error = undefined
          obj.receipt = undefined
          obj.attestation = undefined
          obj.result = undefined
          obj.outputChunk = undefined
          obj.log = undefined
          obj.accepted = undefined
          obj.inputEnd = undefined
          obj.inputChunk = undefined
          obj.start = undefined
        }

        if (obj.accepted != null) {
          obj.held = undefined
          obj.receiptAck = undefined
          obj.progress = undefined
          obj.error = undefined
          obj.receipt = undefined
          obj.attestation = undefined
          obj.result = undefined
          obj.outputChunk = undefined
          obj.log = undefined
          obj.rejected = undefined
          obj.inputEnd = undefined
          obj.inputChunk = undefined
          obj.start = undefined
        }

        if (obj.inputEnd != null) {
          obj.held = undefined
          obj.receiptAck = undefined
          obj.progress = undefined
          obj.error = undefined
          obj.receipt = undefined
          obj.attestation = undefined
          obj.result = undefined
          obj.outputChunk = undefined
          obj.log = undefined
          obj.rejected = undefined
          obj.accepted = undefined
          obj.inputChunk = undefined
          obj.start = undefined
        }

        if (obj.inputChunk != null) {
          obj.held = undefined
          obj.receiptAck = undefined
          obj.progress = undefined
          obj.error = undefined
          obj.receipt = undefined
          obj.attestation = undefined
          obj.result = undefined
          obj.outputChunk = undefined
          obj.log = undefined
          obj.rejected = undefined
          obj.accepted = undefined
          obj.inputEnd = undefined
          obj.start = undefined
        }

        if (obj.start != null) {
          obj.held = undefined
          obj.receiptAck = undefined
          obj.progress = undefined
          obj.error = undefined
          obj.receipt = undefined
          obj.attestation = undefined
          obj.result = undefined
          obj.outputChunk = undefined
          obj.log = undefined
          obj.rejected = undefined
          obj.accepted = undefined
          obj.inputEnd = undefined
          obj.inputChunk = undefined
        }

        if (obj.start != null) {
          w.uint32(10)
          JobFrame.Start.codec().encode(obj.start, w)
        }

        if (obj.inputChunk != null) {
          w.uint32(18)
          JobFrame.InputChunk.codec().encode(obj.inputChunk, w)
        }

        if (obj.inputEnd != null) {
          w.uint32(26)
          JobFrame.InputEnd.codec().encode(obj.inputEnd, w)
        }

        if (obj.accepted != null) {
          w.uint32(34)
          JobFrame.Accepted.codec().encode(obj.accepted, w)
        }

        if (obj.rejected != null) {
          w.uint32(42)
          JobFrame.Rejected.codec().encode(obj.rejected, w)
        }

        if (obj.log != null) {
          w.uint32(50)
          JobFrame.Log.codec().encode(obj.log, w)
        }

        if (obj.outputChunk != null) {
          w.uint32(58)
          JobFrame.OutputChunk.codec().encode(obj.outputChunk, w)
        }

        if (obj.result != null) {
          w.uint32(66)
          JobFrame.Result.codec().encode(obj.result, w)
        }

        if (obj.attestation != null) {
          w.uint32(74)
          w.bytes(obj.attestation)
        }

        if (obj.receipt != null) {
          w.uint32(82)
          w.bytes(obj.receipt)
        }

        if (obj.error != null) {
          w.uint32(90)
          JobFrame.Error.codec().encode(obj.error, w)
        }

        if (obj.progress != null) {
          w.uint32(98)
          JobFrame.Progress.codec().encode(obj.progress, w)
        }

        if (obj.receiptAck != null) {
          w.uint32(106)
          JobFrame.ReceiptAck.codec().encode(obj.receiptAck, w)
        }

        if (obj.held != null) {
          w.uint32(114)
          JobFrame.Held.codec().encode(obj.held, w)
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
              obj.start = JobFrame.Start.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.start
              })
              break
            }
            case 2: {
              obj.inputChunk = JobFrame.InputChunk.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.inputChunk
              })
              break
            }
            case 3: {
              obj.inputEnd = JobFrame.InputEnd.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.inputEnd
              })
              break
            }
            case 4: {
              obj.accepted = JobFrame.Accepted.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.accepted
              })
              break
            }
            case 5: {
              obj.rejected = JobFrame.Rejected.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.rejected
              })
              break
            }
            case 6: {
              obj.log = JobFrame.Log.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.log
              })
              break
            }
            case 7: {
              obj.outputChunk = JobFrame.OutputChunk.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.outputChunk
              })
              break
            }
            case 8: {
              obj.result = JobFrame.Result.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.result
              })
              break
            }
            case 9: {
              obj.attestation = reader.bytes()
              break
            }
            case 10: {
              obj.receipt = reader.bytes()
              break
            }
            case 11: {
              obj.error = JobFrame.Error.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.error
              })
              break
            }
            case 12: {
              obj.progress = JobFrame.Progress.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.progress
              })
              break
            }
            case 13: {
              obj.receiptAck = JobFrame.ReceiptAck.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.receiptAck
              })
              break
            }
            case 14: {
              obj.held = JobFrame.Held.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.held
              })
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        if (obj.held != null) {
          delete obj.receiptAck
          delete obj.progress
          delete obj.error
          delete obj.receipt
          delete obj.attestation
          delete obj.result
          delete obj.outputChunk
          delete obj.log
          delete obj.rejected
          delete obj.accepted
          delete obj.inputEnd
          delete obj.inputChunk
          delete obj.start
        }

        if (obj.receiptAck != null) {
          delete obj.held
          delete obj.progress
          delete obj.error
          delete obj.receipt
          delete obj.attestation
          delete obj.result
          delete obj.outputChunk
          delete obj.log
          delete obj.rejected
          delete obj.accepted
          delete obj.inputEnd
          delete obj.inputChunk
          delete obj.start
        }

        if (obj.progress != null) {
          delete obj.held
          delete obj.receiptAck
          delete obj.error
          delete obj.receipt
          delete obj.attestation
          delete obj.result
          delete obj.outputChunk
          delete obj.log
          delete obj.rejected
          delete obj.accepted
          delete obj.inputEnd
          delete obj.inputChunk
          delete obj.start
        }

        if (obj.error != null) {
          delete obj.held
          delete obj.receiptAck
          delete obj.progress
          delete obj.receipt
          delete obj.attestation
          delete obj.result
          delete obj.outputChunk
          delete obj.log
          delete obj.rejected
          delete obj.accepted
          delete obj.inputEnd
          delete obj.inputChunk
          delete obj.start
        }

        if (obj.receipt != null) {
          delete obj.held
          delete obj.receiptAck
          delete obj.progress
          delete obj.error
          delete obj.attestation
          delete obj.result
          delete obj.outputChunk
          delete obj.log
          delete obj.rejected
          delete obj.accepted
          delete obj.inputEnd
          delete obj.inputChunk
          delete obj.start
        }

        if (obj.attestation != null) {
          delete obj.held
          delete obj.receiptAck
          delete obj.progress
          delete obj.error
          delete obj.receipt
          delete obj.result
          delete obj.outputChunk
          delete obj.log
          delete obj.rejected
          delete obj.accepted
          delete obj.inputEnd
          delete obj.inputChunk
          delete obj.start
        }

        if (obj.result != null) {
          delete obj.held
          delete obj.receiptAck
          delete obj.progress
          delete obj.error
          delete obj.receipt
          delete obj.attestation
          delete obj.outputChunk
          delete obj.log
          delete obj.rejected
          delete obj.accepted
          delete obj.inputEnd
          delete obj.inputChunk
          delete obj.start
        }

        if (obj.outputChunk != null) {
          delete obj.held
          delete obj.receiptAck
          delete obj.progress
          delete obj.error
          delete obj.receipt
          delete obj.attestation
          delete obj.result
          delete obj.log
          delete obj.rejected
          delete obj.accepted
          delete obj.inputEnd
          delete obj.inputChunk
          delete obj.start
        }

        if (obj.log != null) {
          delete obj.held
          delete obj.receiptAck
          delete obj.progress
          delete obj.error
          delete obj.receipt
          delete obj.attestation
          delete obj.result
          delete obj.outputChunk
          delete obj.rejected
          delete obj.accepted
          delete obj.inputEnd
          delete obj.inputChunk
          delete obj.start
        }

        if (obj.rejected != null) {
          delete obj.held
          delete obj.receiptAck
          delete obj.progress
          delete obj.error
          delete obj.receipt
          delete obj.attestation
          delete obj.result
          delete obj.outputChunk
          delete obj.log
          delete obj.accepted
          delete obj.inputEnd
          delete obj.inputChunk
          delete obj.start
        }

        if (obj.accepted != null) {
          delete obj.held
          delete obj.receiptAck
          delete obj.progress
          delete obj.error
          delete obj.receipt
          delete obj.attestation
          delete obj.result
          delete obj.outputChunk
          delete obj.log
          delete obj.rejected
          delete obj.inputEnd
          delete obj.inputChunk
          delete obj.start
        }

        if (obj.inputEnd != null) {
          delete obj.held
          delete obj.receiptAck
          delete obj.progress
          delete obj.error
          delete obj.receipt
          delete obj.attestation
          delete obj.result
          delete obj.outputChunk
          delete obj.log
          delete obj.rejected
          delete obj.accepted
          delete obj.inputChunk
          delete obj.start
        }

        if (obj.inputChunk != null) {
          delete obj.held
          delete obj.receiptAck
          delete obj.progress
          delete obj.error
          delete obj.receipt
          delete obj.attestation
          delete obj.result
          delete obj.outputChunk
          delete obj.log
          delete obj.rejected
          delete obj.accepted
          delete obj.inputEnd
          delete obj.start
        }

        if (obj.start != null) {
          delete obj.held
          delete obj.receiptAck
          delete obj.progress
          delete obj.error
          delete obj.receipt
          delete obj.attestation
          delete obj.result
          delete obj.outputChunk
          delete obj.log
          delete obj.rejected
          delete obj.accepted
          delete obj.inputEnd
          delete obj.inputChunk
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<JobFrame>): Uint8Array => {
    return encodeMessage(obj, JobFrame.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobFrame>): JobFrame => {
    return decodeMessage(buf, JobFrame.codec(), opts)
  }
}

export interface Attestation {
  jobId: Uint8Array
  renter: Uint8Array
  provider: Uint8Array
  inputDigest: Uint8Array
  outputDigest: Uint8Array
  startedAt: bigint
  endedAt: bigint
  status: JobStatus
  exitCode: number
  gpu?: Attestation.GpuFingerprint
  telemetry?: Attestation.Telemetry
  awardHash: Uint8Array
  preemptible: boolean
  gpus: Attestation.GpuFingerprint[]
}

export namespace Attestation {
  export interface GpuFingerprint {
    uuidHash: Uint8Array
    driverVersion: string
    model: string
  }

  export namespace GpuFingerprint {
    let _codec: Codec<GpuFingerprint>

    export const codec = (): Codec<GpuFingerprint> => {
      if (_codec == null) {
        _codec = message<GpuFingerprint>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.uuidHash != null && obj.uuidHash.byteLength > 0)) {
            w.uint32(10)
            w.bytes(obj.uuidHash)
          }

          if ((obj.driverVersion != null && obj.driverVersion !== '')) {
            w.uint32(18)
            w.string(obj.driverVersion)
          }

          if ((obj.model != null && obj.model !== '')) {
            w.uint32(26)
            w.string(obj.model)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            uuidHash: EMPTY_BYTES,
            driverVersion: '',
            model: ''
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.uuidHash = reader.bytes()
                break
              }
              case 2: {
                obj.driverVersion = reader.string()
                break
              }
              case 3: {
                obj.model = reader.string()
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

    export const encode = (obj: Partial<GpuFingerprint>): Uint8Array => {
      return encodeMessage(obj, GpuFingerprint.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<GpuFingerprint>): GpuFingerprint => {
      return decodeMessage(buf, GpuFingerprint.codec(), opts)
    }
  }

  export interface Telemetry {
    avgUtilPpm: number
    maxTempC: number
    energyMj: bigint
    samples: number
    simulated: boolean
  }

  export namespace Telemetry {
    let _codec: Codec<Telemetry>

    export const codec = (): Codec<Telemetry> => {
      if (_codec == null) {
        _codec = message<Telemetry>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.avgUtilPpm != null && obj.avgUtilPpm !== 0)) {
            w.uint32(8)
            w.uint32(obj.avgUtilPpm)
          }

          if ((obj.maxTempC != null && obj.maxTempC !== 0)) {
            w.uint32(16)
            w.uint32(obj.maxTempC)
          }

          if ((obj.energyMj != null && obj.energyMj !== 0n)) {
            w.uint32(24)
            w.uint64(obj.energyMj)
          }

          if ((obj.samples != null && obj.samples !== 0)) {
            w.uint32(32)
            w.uint32(obj.samples)
          }

          if ((obj.simulated != null && obj.simulated !== false)) {
            w.uint32(40)
            w.bool(obj.simulated)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            avgUtilPpm: 0,
            maxTempC: 0,
            energyMj: 0n,
            samples: 0,
            simulated: false
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.avgUtilPpm = reader.uint32()
                break
              }
              case 2: {
                obj.maxTempC = reader.uint32()
                break
              }
              case 3: {
                obj.energyMj = reader.uint64()
                break
              }
              case 4: {
                obj.samples = reader.uint32()
                break
              }
              case 5: {
                obj.simulated = reader.bool()
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

    export const encode = (obj: Partial<Telemetry>): Uint8Array => {
      return encodeMessage(obj, Telemetry.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Telemetry>): Telemetry => {
      return decodeMessage(buf, Telemetry.codec(), opts)
    }
  }

  let _codec: Codec<Attestation>

  export const codec = (): Codec<Attestation> => {
    if (_codec == null) {
      _codec = message<Attestation>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.jobId)
        }

        if ((obj.renter != null && obj.renter.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.renter)
        }

        if ((obj.provider != null && obj.provider.byteLength > 0)) {
          w.uint32(26)
          w.bytes(obj.provider)
        }

        if ((obj.inputDigest != null && obj.inputDigest.byteLength > 0)) {
          w.uint32(34)
          w.bytes(obj.inputDigest)
        }

        if ((obj.outputDigest != null && obj.outputDigest.byteLength > 0)) {
          w.uint32(42)
          w.bytes(obj.outputDigest)
        }

        if ((obj.startedAt != null && obj.startedAt !== 0n)) {
          w.uint32(48)
          w.uint64(obj.startedAt)
        }

        if ((obj.endedAt != null && obj.endedAt !== 0n)) {
          w.uint32(56)
          w.uint64(obj.endedAt)
        }

        if (obj.status != null && __JobStatusValues[obj.status] !== 0) {
          w.uint32(64)
          JobStatus.codec().encode(obj.status, w)
        }

        if ((obj.exitCode != null && obj.exitCode !== 0)) {
          w.uint32(72)
          w.sint32(obj.exitCode)
        }

        if (obj.gpu != null) {
          w.uint32(82)
          Attestation.GpuFingerprint.codec().encode(obj.gpu, w)
        }

        if (obj.telemetry != null) {
          w.uint32(90)
          Attestation.Telemetry.codec().encode(obj.telemetry, w)
        }

        if ((obj.awardHash != null && obj.awardHash.byteLength > 0)) {
          w.uint32(98)
          w.bytes(obj.awardHash)
        }

        if ((obj.preemptible != null && obj.preemptible !== false)) {
          w.uint32(104)
          w.bool(obj.preemptible)
        }

        if (obj.gpus != null) {
          for (const value of obj.gpus) {
            w.uint32(114)
            Attestation.GpuFingerprint.codec().encode(value, w)
          }
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: EMPTY_BYTES,
          renter: EMPTY_BYTES,
          provider: EMPTY_BYTES,
          inputDigest: EMPTY_BYTES,
          outputDigest: EMPTY_BYTES,
          startedAt: 0n,
          endedAt: 0n,
          status: JobStatus.JOB_STATUS_UNSPECIFIED,
          exitCode: 0,
          awardHash: EMPTY_BYTES,
          preemptible: false,
          gpus: []
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.bytes()
              break
            }
            case 2: {
              obj.renter = reader.bytes()
              break
            }
            case 3: {
              obj.provider = reader.bytes()
              break
            }
            case 4: {
              obj.inputDigest = reader.bytes()
              break
            }
            case 5: {
              obj.outputDigest = reader.bytes()
              break
            }
            case 6: {
              obj.startedAt = reader.uint64()
              break
            }
            case 7: {
              obj.endedAt = reader.uint64()
              break
            }
            case 8: {
              obj.status = JobStatus.codec().decode(reader)
              break
            }
            case 9: {
              obj.exitCode = reader.sint32()
              break
            }
            case 10: {
              obj.gpu = Attestation.GpuFingerprint.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.gpu
              })
              break
            }
            case 11: {
              obj.telemetry = Attestation.Telemetry.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.telemetry
              })
              break
            }
            case 12: {
              obj.awardHash = reader.bytes()
              break
            }
            case 13: {
              obj.preemptible = reader.bool()
              break
            }
            case 14: {
              if (opts.limits?.gpus != null && obj.gpus.length === opts.limits.gpus) {
                throw new MaxLengthError('Decode error - map field "gpus" had too many elements')
              }

              if (obj.gpus.length === 16) {
                throw new MaxLengthError('Decode error - repeated field "gpus" had too many elements')
              }

              obj.gpus.push(Attestation.GpuFingerprint.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.gpus$
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

  export const encode = (obj: Partial<Attestation>): Uint8Array => {
    return encodeMessage(obj, Attestation.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Attestation>): Attestation => {
    return decodeMessage(buf, Attestation.codec(), opts)
  }
}

export interface Receipt {
  jobId: Uint8Array
  provider: Uint8Array
  renter: Uint8Array
  attestationHash: Uint8Array
  outcome: Receipt.Outcome
  latencyMs: bigint
  pricePaidMicroUsd: bigint
  createdAt: bigint
  receivedOutputDigest: Uint8Array
}

export namespace Receipt {
  export enum Outcome {
    OUTCOME_UNSPECIFIED = 'OUTCOME_UNSPECIFIED',
    OK = 'OK',
    FAILED = 'FAILED',
    BAD_OUTPUT = 'BAD_OUTPUT',
    TIMEOUT = 'TIMEOUT',
    PREEMPTED = 'PREEMPTED'
  }

  enum __OutcomeValues {
    OUTCOME_UNSPECIFIED = 0,
    OK = 1,
    FAILED = 2,
    BAD_OUTPUT = 3,
    TIMEOUT = 4,
    PREEMPTED = 5
  }

  export namespace Outcome {
    let _codec: Codec<Outcome> | undefined
    export const codec = (): Codec<Outcome> => {
      return (_codec ??= enumeration<Outcome>(__OutcomeValues))
    }
  }

  let _codec: Codec<Receipt>

  export const codec = (): Codec<Receipt> => {
    if (_codec == null) {
      _codec = message<Receipt>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.jobId)
        }

        if ((obj.provider != null && obj.provider.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.provider)
        }

        if ((obj.renter != null && obj.renter.byteLength > 0)) {
          w.uint32(26)
          w.bytes(obj.renter)
        }

        if ((obj.attestationHash != null && obj.attestationHash.byteLength > 0)) {
          w.uint32(34)
          w.bytes(obj.attestationHash)
        }

        if (obj.outcome != null && __OutcomeValues[obj.outcome] !== 0) {
          w.uint32(40)
          Receipt.Outcome.codec().encode(obj.outcome, w)
        }

        if ((obj.latencyMs != null && obj.latencyMs !== 0n)) {
          w.uint32(48)
          w.uint64(obj.latencyMs)
        }

        if ((obj.pricePaidMicroUsd != null && obj.pricePaidMicroUsd !== 0n)) {
          w.uint32(56)
          w.uint64(obj.pricePaidMicroUsd)
        }

        if ((obj.createdAt != null && obj.createdAt !== 0n)) {
          w.uint32(64)
          w.uint64(obj.createdAt)
        }

        if ((obj.receivedOutputDigest != null && obj.receivedOutputDigest.byteLength > 0)) {
          w.uint32(74)
          w.bytes(obj.receivedOutputDigest)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: EMPTY_BYTES,
          provider: EMPTY_BYTES,
          renter: EMPTY_BYTES,
          attestationHash: EMPTY_BYTES,
          outcome: Outcome.OUTCOME_UNSPECIFIED,
          latencyMs: 0n,
          pricePaidMicroUsd: 0n,
          createdAt: 0n,
          receivedOutputDigest: EMPTY_BYTES
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.bytes()
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
              obj.attestationHash = reader.bytes()
              break
            }
            case 5: {
              obj.outcome = Receipt.Outcome.codec().decode(reader)
              break
            }
            case 6: {
              obj.latencyMs = reader.uint64()
              break
            }
            case 7: {
              obj.pricePaidMicroUsd = reader.uint64()
              break
            }
            case 8: {
              obj.createdAt = reader.uint64()
              break
            }
            case 9: {
              obj.receivedOutputDigest = reader.bytes()
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

  export const encode = (obj: Partial<Receipt>): Uint8Array => {
    return encodeMessage(obj, Receipt.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Receipt>): Receipt => {
    return decodeMessage(buf, Receipt.codec(), opts)
  }
}
