/**
 * multistream-select 1.0 for the security step only, read and written on the TCP socket itself:
 * libp2p's own negotiation reads through a JS duplex, after which Node's TLS can no longer take
 * the socket natively. Wire: each message is a uvarint length, the text and "\n"
 * (https://github.com/multiformats/multistream-select). The dialer sends the header with its
 * first proposal and waits for the answer before sending more, as js- and go-libp2p do, so
 * nothing of the encrypter's handshake is read here.
 */
import type { Socket } from 'node:net'
import * as varint from 'uint8-varint'

export const MULTISTREAM = '/multistream/1.0.0'
const NA = 'na'
/** the longest message either side accepts, its newline included (libp2p's own limit) */
export const MAX_MESSAGE_BYTES = 1024
/** proposals a listener answers before it gives up on a dialer */
export const MAX_PROPOSALS = 8

/** The peer broke the negotiation: a malformed or oversized message, or no protocol in common. */
export class NegotiationError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'NegotiationError'
  }
}

export function encodeMessage (text: string): Uint8Array {
  const body = Buffer.from(`${text}\n`)
  const out = Buffer.alloc(varint.encodingLength(body.length) + body.length)
  varint.encode(body.length, out)
  body.copy(out, out.length - body.length)
  return out
}

/** Reads whole messages off a socket; `release` hands the socket back paused, with what was read past the last message. */
class MessageReader {
  private buffered: Buffer = Buffer.alloc(0)
  private failure: Error | undefined
  private wake: (() => void) | undefined
  private readonly onData = (chunk: Buffer): void => {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk])
    // a dialer sends two messages at most before it waits: more than that is not a negotiation
    if (this.buffered.length > 2 * (MAX_MESSAGE_BYTES + 2)) this.fail(new NegotiationError('the peer sent more than a negotiation holds'))
    this.notify()
  }

  private readonly onEnd = (): void => { this.fail(new NegotiationError('the connection closed during the security negotiation')) }
  private readonly onError = (err: Error): void => { this.fail(err) }

  constructor (private readonly socket: Socket, private readonly signal: AbortSignal) {
    socket.on('data', this.onData)
    socket.once('end', this.onEnd)
    socket.once('close', this.onEnd)
    socket.once('error', this.onError)
    signal.addEventListener('abort', this.onAbort)
  }

  private readonly onAbort = (): void => { this.fail(this.signal.reason instanceof Error ? this.signal.reason : new NegotiationError('the security negotiation was aborted')) }

  private fail (err: Error): void {
    this.failure ??= err
    this.notify()
  }

  private notify (): void {
    const wake = this.wake
    this.wake = undefined
    wake?.()
  }

  async next (): Promise<string> {
    for (;;) {
      if (this.failure != null) throw this.failure
      const message = this.take()
      if (message != null) return message
      await new Promise<void>(resolve => { this.wake = resolve })
    }
  }

  /** A whole message from the buffer, or undefined while one is still arriving. */
  private take (): string | undefined {
    let length: number
    try {
      length = varint.decode(this.buffered)
    } catch {
      // an unfinished varint; anything longer than two bytes already exceeds the bound
      if (this.buffered.length > 2) throw new NegotiationError('a negotiation message with a malformed length')
      return undefined
    }
    if (length < 1 || length > MAX_MESSAGE_BYTES) throw new NegotiationError(`a negotiation message of ${length} bytes (1 to ${MAX_MESSAGE_BYTES} allowed)`)
    const start = varint.encodingLength(length)
    if (this.buffered.length < start + length) return undefined
    const body = this.buffered.subarray(start, start + length)
    this.buffered = this.buffered.subarray(start + length)
    if (body[body.length - 1] !== 0x0a) throw new NegotiationError('a negotiation message without its newline')
    return body.subarray(0, body.length - 1).toString('utf8')
  }

  release (): Buffer {
    this.socket.pause()
    this.socket.off('data', this.onData)
    this.socket.off('end', this.onEnd)
    this.socket.off('close', this.onEnd)
    this.socket.off('error', this.onError)
    this.signal.removeEventListener('abort', this.onAbort)
    return this.buffered
  }
}

export interface Negotiated {
  protocol: string
  /** bytes read past the negotiation (a conforming peer sends none) */
  leftover: Buffer
}

async function negotiate (socket: Socket, signal: AbortSignal, run: (reader: MessageReader) => Promise<string>): Promise<Negotiated> {
  signal.throwIfAborted()
  const reader = new MessageReader(socket, signal)
  try {
    const protocol = await run(reader)
    return { protocol, leftover: reader.release() }
  } catch (err) {
    reader.release()
    throw err
  }
}

/** The dialer's side: proposes `protocols` in order until the listener accepts one. */
export async function selectProtocol (socket: Socket, protocols: readonly string[], signal: AbortSignal): Promise<Negotiated> {
  if (protocols.length === 0) throw new NegotiationError('no security protocol to propose')
  return await negotiate(socket, signal, async reader => {
    socket.write(Buffer.concat([encodeMessage(MULTISTREAM), encodeMessage(protocols[0])]))
    const header = await reader.next()
    if (header !== MULTISTREAM) throw new NegotiationError(`the listener answered "${header.slice(0, 64)}" instead of ${MULTISTREAM}`)
    for (let i = 0; i < protocols.length; i++) {
      if (i > 0) socket.write(encodeMessage(protocols[i]))
      const answer = await reader.next()
      if (answer === protocols[i]) return answer
      if (answer !== NA) throw new NegotiationError(`the listener answered "${answer.slice(0, 64)}" to ${protocols[i]}`)
    }
    throw new NegotiationError(`the listener speaks none of ${protocols.join(', ')}`)
  })
}

/** The listener's side: answers the dialer's proposals until one is in `protocols`. */
export async function handleProtocol (socket: Socket, protocols: readonly string[], signal: AbortSignal): Promise<Negotiated> {
  return await negotiate(socket, signal, async reader => {
    const header = await reader.next()
    if (header !== MULTISTREAM) throw new NegotiationError(`the dialer opened with "${header.slice(0, 64)}" instead of ${MULTISTREAM}`)
    socket.write(encodeMessage(MULTISTREAM))
    for (let i = 0; i < MAX_PROPOSALS; i++) {
      const proposal = await reader.next()
      if (protocols.includes(proposal)) {
        socket.write(encodeMessage(proposal))
        return proposal
      }
      socket.write(encodeMessage(NA))
    }
    throw new NegotiationError(`the dialer proposed ${MAX_PROPOSALS} security protocols, none of ${protocols.join(', ')}`)
  })
}
