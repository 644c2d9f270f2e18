/**
 * `idlegrid submit`'s live view on a terminal (cli-progress): the auction's bid window filling
 * with bids and the best price so far, the inputs' transfer (bytes, share, rate), the run's
 * elapsed time and the outputs' bytes and rate. The command's own lines (log lines, failovers)
 * are printed above the bar. Only on a TTY and without --json: elsewhere there is no view and
 * the command prints its lines as before.
 */
import cliProgress from 'cli-progress'
import { shortPeerId } from '../common/index.js'
import type { SubmitEvent } from '../submit/index.js'

type Phase = 'auction' | 'sending' | 'running' | 'receiving'

export interface LiveView {
  /** the command's lines, printed above the bar */
  info(text: string): void
  /** one submit event (or a bare auction event, from `submit --auction-only`) */
  event(e: SubmitEvent | { type: string, [k: string]: unknown }): void
  stop(): void
}

/** Bytes as B, KiB, MiB or GiB with one decimal. */
export function formatBytes (n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB']
  let value = n
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++ }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`
}

/** A live view on `stream` when it is a terminal and the output is not JSON; undefined otherwise. */
export function liveView (opts: { json: boolean, stream?: NodeJS.WriteStream }): LiveView | undefined {
  const stream = opts.stream ?? process.stdout
  if (opts.json || stream.isTTY !== true) return undefined
  return new SubmitView(stream)
}

class SubmitView implements LiveView {
  private readonly bars: cliProgress.MultiBar
  private bar?: cliProgress.SingleBar
  private phase?: Phase
  private since = Date.now()
  private bids = 0
  private best?: number
  private windowMs = 1

  constructor (stream: NodeJS.WriteStream) {
    this.bars = new cliProgress.MultiBar({ stream, hideCursor: true, clearOnComplete: true, stopOnComplete: false, barsize: 24, fps: 10, forceRedraw: true, gracefulExit: false, format: '{bar} {text}' }, cliProgress.Presets.shades_classic)
  }

  info (text: string): void {
    this.bars.log(text + '\n')
    this.bars.update()
  }

  event (e: SubmitEvent | { type: string, [k: string]: unknown }): void {
    const auction = e.type === 'auction' ? (e as { event: { type: string, [k: string]: unknown } }).event : e
    switch (auction.type) {
      case 'published':
        this.bids = 0; this.best = undefined; this.windowMs = Math.max(1, Number(auction.windowMs))
        this.show('auction', 1, 0)
        this.tick(0, `auction: bid window ${this.windowMs} ms, no bids yet`)
        return
      case 'bid': {
        this.bids++
        const price = Number(auction.price)
        if (Number.isFinite(price)) this.best = Math.min(this.best ?? price, price)
        this.tick(Math.min(1, (Date.now() - this.since) / this.windowMs), `auction: ${this.bids} bid${this.bids > 1 ? 's' : ''}, best ${this.best?.toFixed(2) ?? '-'} USD/GPU-h`)
        return
      }
      case 'closed': this.tick(1, `auction closed: ${String(auction.valid)} valid of ${String(auction.bids)} bids`); return
      case 'award': this.tick(1, `award to ${shortPeerId(String(auction.winner))} at ${Number(auction.price).toFixed(2)} USD/GPU-h, waiting for acceptance`); return
    }
    const job = e as SubmitEvent
    switch (job.type) {
      case 'sending':
        this.show('sending', Math.max(1, job.totalBytes), job.sentBytes)
        this.tick(job.sentBytes, `inputs ${formatBytes(job.sentBytes)} of ${formatBytes(job.totalBytes)} at ${this.rate(job.sentBytes)}`, Math.max(1, job.totalBytes))
        return
      case 'accepted': this.show('running', 1, 0); this.tick(0, 'accepted; running'); return
      case 'progress': this.show('running', 1, 0); this.tick(0, `running ${Math.round(job.elapsedMs / 1000)} s`); return
      case 'receiving':
        this.show('receiving', 1, 0)
        this.tick(0, `outputs ${formatBytes(job.receivedBytes)} at ${this.rate(job.receivedBytes)}`)
        return
      case 'attempt-ended': this.stopBar()
    }
  }

  stop (): void {
    this.stopBar()
    this.bars.stop()
  }

  /** Starts a bar for `phase` unless it is the current one. */
  private show (phase: Phase, total: number, value: number): void {
    if (this.phase === phase && this.bar != null) return
    this.stopBar()
    this.phase = phase
    this.since = Date.now()
    this.bar = this.bars.create(total, value, { text: '' })
  }

  private tick (value: number, text: string, total?: number): void {
    if (this.bar == null) return
    if (total != null) this.bar.setTotal(total)
    this.bar.update(value, { text })
    // drawn now, not at the next frame: a short phase is seen too
    this.bars.update()
  }

  private rate (bytes: number): string {
    const s = Math.max(0.001, (Date.now() - this.since) / 1000)
    return `${formatBytes(Math.round(bytes / s))}/s`
  }

  private stopBar (): void {
    if (this.bar != null) this.bars.remove(this.bar)
    this.bar = undefined
    this.phase = undefined
  }
}
