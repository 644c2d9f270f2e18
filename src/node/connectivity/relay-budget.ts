/**
 * A relay operator's total bandwidth (issue 37 item 3). libp2p's relay server bounds each
 * circuit (time, bytes: relay.circuitSeconds, relay.circuitBytes) but not their sum, so an
 * operator whose relay carries jobs (relay.unlimited) could not say "at most this much an hour".
 * `relay.maxBytesPerHour` does: every byte of a circuit crosses the hop stream the source peer
 * opened (both ways), so those are metered; once the hour's budget is spent the circuits being
 * relayed are cut and new hop requests (reservations, connects) are refused until the hour
 * turns. Peers behind NAT hold a slot on another relay too (relay.ts), and fail over to it.
 */
import { NodeError } from '../errors.js'
import { wrappedHandler } from './component-proxies.js'
import type { ComponentLogger, Logger, Stream } from '@libp2p/interface'
import type { Registrar } from '@libp2p/interface-internal'

export const HOP_PROTOCOL = '/libp2p/circuit/relay/0.2.0/hop'
const HOUR_MS = 60 * 60_000

export interface RelayBudgetStatus { bytesPerHour: number, usedBytes: number, resetsInMs: number }

/** Bytes carried in the current hour (it starts with the first byte after the last one ended). */
export class RelayBudget {
  private windowStart = -Infinity
  private used = 0

  constructor (readonly bytesPerHour: number, private readonly now: () => number = Date.now) {}

  spent (): boolean {
    this.roll()
    return this.used >= this.bytesPerHour
  }

  /** Counts `bytes` carried; throws NodeError ERR_RELAY_BUDGET once the hour's budget is passed. */
  take (bytes: number): void {
    this.roll()
    this.used += bytes
    if (this.used > this.bytesPerHour) throw new NodeError('ERR_RELAY_BUDGET', `the relay's budget of ${this.bytesPerHour} bytes per hour is spent`)
  }

  status (): RelayBudgetStatus {
    this.roll()
    return {
      bytesPerHour: this.bytesPerHour,
      usedBytes: Math.min(this.used, this.bytesPerHour),
      resetsInMs: Math.max(0, this.windowStart + HOUR_MS - this.now())
    }
  }

  private roll (): void {
    const now = this.now()
    if (now - this.windowStart >= HOUR_MS) {
      this.windowStart = now
      this.used = 0
    }
  }
}

/** Counts every byte of `stream`, both ways, against `budget` (a chunk past it ends the stream with the error). */
export function meterStream (stream: Stream, budget: RelayBudget): void {
  const metered = async function * <T extends { byteLength: number }> (
    chunks: AsyncIterable<T> | Iterable<T>
  ): AsyncGenerator<T> {
    for await (const chunk of chunks) {
      budget.take(chunk.byteLength)
      yield chunk
    }
  }
  const { source } = stream
  const sink = stream.sink.bind(stream)
  stream.source = metered(source)
  stream.sink = async (chunks) => { await sink(metered(chunks)) }
}

/** `registrar` whose hop handler meters its streams, and refuses them while the budget is spent. */
export function budgetedRegistrar (registrar: Registrar, budget: RelayBudget, logger: ComponentLogger): Registrar {
  const log: Logger = logger.forComponent('idlegrid:relay:budget')
  return wrappedHandler(registrar, HOP_PROTOCOL, (handler) => (data) => {
    if (budget.spent()) {
      log('refused a hop request from %p: %s', data.connection.remotePeer, JSON.stringify(budget.status()))
      data.stream.abort(new NodeError('ERR_RELAY_BUDGET', 'the relay\'s bandwidth budget for this hour is spent'))
      return
    }
    meterStream(data.stream, budget)
    return handler(data)
  })
}
