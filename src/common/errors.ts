/**
 * The house's error shape: one class per room (`ConfigError`, `TransportError`, …), each a
 * CodedError whose `code` says which of the room's failures it is. Callers branch on the class
 * and the code (`isCoded(err, TransportError, 'ERR_CERT_EXPIRED')`), never on the message.
 * Codes that leave the process (control answers, wire frames, exit codes) are listed in the
 * spec they travel in.
 */
export class CodedError<Code extends string = string> extends Error {
  readonly code: Code

  constructor (code: Code, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

type ErrorClass<E extends CodedError> = abstract new (...args: any[]) => E

/** `err` is an instance of `cls`, and (when codes are given) carries one of them. */
export function isCoded<E extends CodedError, C extends E['code']> (err: unknown, cls: ErrorClass<E>, ...codes: C[]): err is E & { code: C } {
  return err instanceof cls && (codes.length === 0 || (codes as string[]).includes(err.code))
}

/**
 * The reason a service's lifetime signal aborts with when it stops: made once, at load. An
 * abort() without a reason makes a DOMException whose stack keeps its frames' receivers, the
 * stopping service among them, and Node keeps a composite signal (AbortSignal.any) that still
 * had a listener when its source aborted; so a stopped node stayed reachable whole (its ledger's
 * reputation evidence: 11 MB per 20,000 entries, for every node a process started and stopped).
 */
export const SERVICE_STOPPED: DOMException = new DOMException('the service stopped', 'AbortError')
