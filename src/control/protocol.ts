/**
 * The local control endpoint: newline-delimited JSON over a Unix socket in the node's data
 * directory (owner-only). A request names a method; the node may send event lines before
 * the one result or error line that ends the call.
 */
import { CodedError } from '../common/index.js'

export const CONTROL_SOCKET = 'control.sock'
/** Longest accepted line, either direction. */
export const MAX_CONTROL_LINE = 1024 * 1024

export interface ControlRequest {
  id: number
  method: string
  params?: Record<string, unknown>
}

export type ControlReply =
  | { id: number, result: unknown }
  | { id: number, error: { code: string, message: string } }
  | { id: number, event: unknown }

/**
 * The control room's own codes (the README's "Control socket" lists them): the server answers
 * ERR_BAD_REQUEST, ERR_UNKNOWN_METHOD, ERR_BAD_PARAMS and ERR_INTERNAL; the client raises the
 * others. A handler's error travels with its own code (ERR_CONFIG, ERR_SUBMIT, …), so a
 * ControlError the client rebuilds from an answer may carry any code.
 */
export type ControlErrorCode =
  'ERR_CONTROL_UNAVAILABLE' | 'ERR_CONTROL_TIMEOUT' | 'ERR_CONTROL_IO' | 'ERR_CONTROL_CLOSED' | 'ERR_CONTROL_PROTOCOL' |
  'ERR_LINE_TOO_LONG' | 'ERR_SOCKET_PATH' | 'ERR_BAD_REQUEST' | 'ERR_UNKNOWN_METHOD' | 'ERR_BAD_PARAMS' | 'ERR_INTERNAL'

/** The control room's error; ERR_CONTROL_UNAVAILABLE: no node answers on a data directory's socket. */
export class ControlError extends CodedError<ControlErrorCode | (string & {})> {
  constructor (code: ControlErrorCode | (string & {}), message: string, options?: ErrorOptions) {
    super(code, message, options)
    this.name = 'ControlError'
  }
}

/** No node answers on this data directory's control socket (no socket, or a stale one). */
export function controlUnavailable (path: string, why: string): ControlError {
  return new ControlError('ERR_CONTROL_UNAVAILABLE', `no running node answers on ${path} (${why})`)
}

/** Splits a byte stream into lines, refusing any line longer than MAX_CONTROL_LINE. */
export class LineSplitter {
  private buffer = ''
  constructor (private readonly onLine: (line: string) => void) {}

  push (chunk: string): void {
    this.buffer += chunk
    let at: number
    while ((at = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, at)
      this.buffer = this.buffer.slice(at + 1)
      if (line.trim() !== '') this.onLine(line)
    }
    if (this.buffer.length > MAX_CONTROL_LINE) {
      this.buffer = ''
      throw new ControlError('ERR_LINE_TOO_LONG', `control line longer than ${MAX_CONTROL_LINE} bytes`)
    }
  }
}
