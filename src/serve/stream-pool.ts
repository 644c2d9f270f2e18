/**
 * The gateway's serve streams, kept open between requests (HTTP keep-alive, over libp2p):
 * opening a stream costs a muxer frame, a protocol selection and a handler start on the
 * provider, many times the cost of a request on an open one (test/bench/serve.bench.ts). A
 * stream carries one request at a time; after its answer's End it goes back to its provider's
 * idle list, bounded in number and in age (older ones are closed cleanly, well before the
 * provider's own keep-alive bound, so a request is never sent on a stream the provider is
 * closing).
 */
import { PROTOCOL } from '../../protocols/ids.js'
import { ServeChannel } from './wire.js'
import type { Libp2p, PeerId } from '@libp2p/interface'

export type Dialer = Pick<Libp2p, 'dialProtocol'>

export const STREAM_POOL_DEFAULTS = {
  /** idle streams kept per provider */
  maxIdlePerProvider: 16,
  /** an idle stream older than this is closed (the provider keeps one 30 s: HOST_DEFAULTS.keepAliveMs) */
  idleMs: 10_000
}

interface Idle { ch: ServeChannel, since: number }

export class ServeStreamPool {
  private readonly idle = new Map<string, Idle[]>()
  private readonly opts: typeof STREAM_POOL_DEFAULTS
  private readonly sweeper: NodeJS.Timeout
  private closed = false

  constructor (
    private readonly dialer: Dialer,
    private readonly frameMs: number,
    opts: Partial<typeof STREAM_POOL_DEFAULTS> = {}
  ) {
    this.opts = { ...STREAM_POOL_DEFAULTS, ...opts }
    this.sweeper = setInterval(() => { this.sweep() }, Math.max(100, this.opts.idleMs / 2)).unref()
  }

  /**
   * An open stream to `provider`: an idle one when there is one still usable, else a new one (lazy
   * protocol selection).
   */
  async acquire (provider: PeerId, dialMs: number): Promise<{ ch: ServeChannel, reused: boolean }> {
    const list = this.idle.get(provider.toString()) ?? []
    const now = Date.now()
    for (let idle = list.pop(); idle != null; idle = list.pop()) {
      if (idle.ch.reusable && now - idle.since < this.opts.idleMs) return { ch: idle.ch, reused: true }
      this.dispose(idle.ch)
    }
    const stream = await this.dialer.dialProtocol(provider, PROTOCOL.serve, {
      negotiateFully: false,
      signal: AbortSignal.timeout(dialMs)
    })
    return { ch: new ServeChannel(stream, this.frameMs), reused: false }
  }

  /** A stream whose last answer ended cleanly: kept for the next request, or closed past the bound. */
  release (provider: PeerId, ch: ServeChannel): void {
    const key = provider.toString()
    const list = this.idle.get(key) ?? []
    if (this.closed || !ch.reusable || list.length >= this.opts.maxIdlePerProvider) { this.dispose(ch); return }
    list.push({ ch, since: Date.now() })
    this.idle.set(key, list)
  }

  /** Idle streams per provider (for tests and status). */
  idleCount (provider: PeerId): number {
    return this.idle.get(provider.toString())?.length ?? 0
  }

  /** Closes every idle stream; streams in use close when their request ends. */
  close (): void {
    this.closed = true
    clearInterval(this.sweeper)
    for (const list of this.idle.values()) for (const { ch } of list) this.dispose(ch)
    this.idle.clear()
  }

  private sweep (): void {
    const now = Date.now()
    for (const [key, list] of this.idle) {
      const keep = list.filter(({ ch, since }) => ch.reusable && now - since < this.opts.idleMs)
      for (const i of list) if (!keep.includes(i)) this.dispose(i.ch)
      if (keep.length === 0) this.idle.delete(key)
      else this.idle.set(key, keep)
    }
  }

  /** A clean close (our End of stream): the provider's handler sees the end and closes too. */
  private dispose (ch: ServeChannel): void {
    ch.close().catch(() => {})
  }
}
