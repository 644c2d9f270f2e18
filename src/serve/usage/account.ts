/**
 * One party's usage account of one lease: its own running counts, and what the lease's
 * co-signed (or, on the renter, countersigned) statements already cover. A side's figures for
 * the next interval are its running totals less what is covered, so a request one side counts
 * a little later than the other is paid in the next interval rather than lost.
 */
import type { Usage } from '../../ledger/index.js'
import type { PeerId } from '@libp2p/interface'

/** What a party counted through the lease so far (running totals). */
export interface UsageCounts {
  requests: number
  bytesIn: number
  bytesOut: number
}

export interface LeaseTerms {
  leaseId: Uint8Array
  provider: PeerId
  renter: PeerId
  /** GPUs the lease holds */
  gpus: number
  priceMicroUsdPerGpuHour: number
  /** unix ms when this party saw the lease start */
  since: number
}

export type UsageFigures = Pick<Usage, 'requests' | 'gpuMs' | 'bytesIn' | 'bytesOut'>

/** The counter a gateway or a host increments for one lease. */
export class UsageCounter implements UsageCounts {
  requests = 0
  bytesIn = 0
  bytesOut = 0

  /** one request answered: its body bytes each way */
  served (bytesIn: number, bytesOut: number): void {
    this.requests++
    this.bytesIn += bytesIn
    this.bytesOut += bytesOut
  }
}

export class UsageAccount {
  /** what the lease's statements so far cover */
  readonly covered: UsageFigures = { requests: 0, gpuMs: 0, bytesIn: 0, bytesOut: 0 }
  /** where the last statement ended (undefined: none yet) */
  lastEnd?: number
  /** the statement this party signed last (the renter's countersigned one) */
  lastStatement?: Uint8Array

  constructor (readonly terms: LeaseTerms, readonly counts: () => UsageCounts) {}

  /** Where the next statement starts: the last one's end, or the lease's start. */
  get nextStart (): number {
    return this.lastEnd ?? this.terms.since
  }

  /**
   * This side's figures for an interval [start, end): its running totals at `end` less what is
   * covered; GPU time is the lease's GPUs over the time since it started, at most the
   * interval's own length times its GPUs.
   */
  figures (start: number, end: number): UsageFigures {
    const c = this.counts()
    const held = Math.max(0, this.terms.gpus * (end - this.terms.since) - this.covered.gpuMs)
    return {
      requests: Math.max(0, c.requests - this.covered.requests),
      gpuMs: Math.min(held, this.terms.gpus * Math.max(0, end - start)),
      bytesIn: Math.max(0, c.bytesIn - this.covered.bytesIn),
      bytesOut: Math.max(0, c.bytesOut - this.covered.bytesOut)
    }
  }

  /** A statement of this lease was signed: its figures are covered, the next one starts at its end. */
  settle (usage: Usage, statement: Uint8Array): void {
    this.covered.requests += usage.requests
    this.covered.gpuMs += usage.gpuMs
    this.covered.bytesIn += usage.bytesIn
    this.covered.bytesOut += usage.bytesOut
    this.lastEnd = usage.intervalEnd
    this.lastStatement = statement
  }
}

/** The renter's figures: each of the provider's claimed figures, at most what the renter measured. */
export function countersignedFigures (claim: UsageFigures, measured: UsageFigures): UsageFigures {
  return {
    requests: Math.min(claim.requests, measured.requests),
    gpuMs: Math.min(claim.gpuMs, measured.gpuMs),
    bytesIn: Math.min(claim.bytesIn, measured.bytesIn),
    bytesOut: Math.min(claim.bytesOut, measured.bytesOut)
  }
}
