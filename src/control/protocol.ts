/**
 * The local control endpoint: newline-delimited JSON over a Unix socket in the node's data
 * directory (owner-only). A request names a method; the node may send event lines before
 * the one result or error line that ends the call.
 */

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

export class ControlError extends Error {
  static readonly code = 'ERR_CONTROL'
  readonly code: string
  constructor (code: string, message: string) {
    super(message)
    this.name = 'ControlError'
    this.code = code
  }
}

/** No node answers on this data directory's control socket. */
export class ControlUnavailableError extends Error {
  static readonly code = 'ERR_CONTROL_UNAVAILABLE'
  readonly code = ControlUnavailableError.code
  constructor (path: string, why: string) {
    super(`no running node answers on ${path} (${why})`)
    this.name = 'ControlUnavailableError'
  }
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
