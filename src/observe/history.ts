/**
 * What the dashboard shows that no service keeps: this renter's recent auctions and jobs (with
 * their live log), and the provider's figures over time. Every list is bounded, and every
 * text a peer sent (log lines, reasons) is cut to a bounded length; the page escapes it.
 */
import type { AuctionReport } from '../market/index.js'
import type { SubmitEvent, SubmitStart } from '../submit/index.js'

export const HISTORY_LIMITS = {
  auctions: 50,
  /** bids kept per auction (the auction itself bounds them too) */
  bidsPerAuction: 64,
  jobs: 50,
  /** log lines kept per job: the last ones */
  logLines: 200,
  /** characters kept of one log line or reason */
  textChars: 1_000,
  samples: 1_440,
  prices: 500
} as const

export type AuctionView = Omit<AuctionReport, 'signed'> & { at: number }

export interface RenterJobView extends SubmitStart {
  /** running, or the summary's status */
  status: string
  endedAt?: number
  provider?: string
  attempt: number
  sentBytes: number
  totalBytes: number
  receivedBytes: number
  /** the last HISTORY_LIMITS.logLines lines, [stream, line] */
  logs: Array<[string, string]>
  attestation?: { status: string, outputDigest: string, verified: boolean } | null
  receipt?: { outcome: string } | null
  history: Array<{ attempt: number, provider: string, outcome: string, detail?: string }>
  detail?: string
}

/** The provider's figures at one moment (market.stats and the ledger's earnings). */
export interface ProviderSample {
  at: number
  bids: number
  wins: number
  /** wins / bids so far */
  fillRate: number
  expectedEarningsUsd: number
  /** receipted in the ledger */
  earnedUsd: number
  busySlots: number
  totalSlots: number
}

export interface PricePoint { at: number, priceUsd: number, side: 'renter' | 'provider' }

/** Keeps at most `limit` items, dropping the oldest. */
export class Ring<T> {
  private readonly items: T[] = []
  constructor (private readonly limit: number) {}

  push (item: T): void {
    this.items.push(item)
    if (this.items.length > this.limit) this.items.splice(0, this.items.length - this.limit)
  }

  list (): T[] {
    return [...this.items]
  }
}

export function clip (text: unknown): string {
  const s = String(text)
  return s.length > HISTORY_LIMITS.textChars ? s.slice(0, HISTORY_LIMITS.textChars) + '…' : s
}

/** An auction report as kept: no signed messages, bids cut to the limit. */
export function auctionView (report: AuctionReport, at: number): AuctionView {
  const { signed, ...plain } = report
  return { ...plain, bids: plain.bids.slice(0, HISTORY_LIMITS.bidsPerAuction), at }
}

/** This renter's jobs, the newest last; each job follows its events. */
export class RenterJobs {
  private readonly jobs = new Map<string, RenterJobView>()

  start (s: SubmitStart): void {
    this.jobs.set(s.jobId, { ...s, status: 'running', attempt: 0, sentBytes: 0, totalBytes: 0, receivedBytes: 0, logs: [], history: [] })
    for (const id of this.jobs.keys()) {
      if (this.jobs.size <= HISTORY_LIMITS.jobs) break
      this.jobs.delete(id)
    }
  }

  event (jobId: string, e: SubmitEvent): void {
    const job = this.jobs.get(jobId)
    if (job == null) return
    switch (e.type) {
      case 'attempt':
        job.attempt = e.attempt; job.provider = e.provider; job.sentBytes = 0; job.receivedBytes = 0
        break
      case 'sending': job.sentBytes = e.sentBytes; job.totalBytes = e.totalBytes; break
      case 'receiving': job.receivedBytes = e.receivedBytes; break
      case 'log':
        job.logs.push([e.stream, clip(e.line)])
        if (job.logs.length > HISTORY_LIMITS.logLines) job.logs.splice(0, job.logs.length - HISTORY_LIMITS.logLines)
        break
      case 'attempt-ended':
        job.history.push({
          attempt: e.attempt,
          provider: e.provider,
          outcome: e.outcome,
          ...(e.detail != null ? { detail: clip(e.detail) } : {})
        })
        break
    }
  }

  end (
    summary: {
      jobId: string
      status: string
      provider: string
      attestation?: { status: string, outputDigest: string, verified: boolean }
      receipt?: { outcome: string }
      detail?: string
    },
    at: number
  ): RenterJobView | undefined {
    const job = this.jobs.get(summary.jobId)
    if (job == null) return undefined
    job.status = summary.status
    job.endedAt = at
    job.provider = summary.provider !== '' ? summary.provider : job.provider
    job.attestation =
      summary.attestation == null
        ? null
        : {
            status: summary.attestation.status,
            outputDigest: summary.attestation.outputDigest,
            verified: summary.attestation.verified
          }
    job.receipt = summary.receipt == null ? null : { outcome: summary.receipt.outcome }
    if (summary.detail != null) job.detail = clip(summary.detail)
    return job
  }

  list (): RenterJobView[] {
    return [...this.jobs.values()].map(j => ({ ...j, logs: [...j.logs], history: [...j.history] }))
  }
}
