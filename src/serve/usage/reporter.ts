/**
 * The provider's side of /idlegrid/usage/1.0.0: at intervals it proposes, for each lease it
 * hosts, its own figures since the lease's last statement; signs the figures the renter
 * countersigned (only co-signed statements count for earnings, so a provider signs what it can
 * get); keeps the co-signed statement in its own ledger and hands it to the renter to keep too.
 */
import { peerIdFromString } from '@libp2p/peer-id'
import { fromString } from 'uint8arrays/from-string'
import { toHex } from '../../common/index.js'
import { decodeStatement, encodeCoSigned, encodeStatement, MAX_USAGE_INTERVAL_MS, signStatement, verifyStatementSignature, type LedgerService, type Usage } from '../../ledger/index.js'
import { UsageAccount, type LeaseTerms, type UsageCounts, type UsageFigures } from './account.js'
import { isUsageError, usageError } from '../errors.js'
import { exchange, type UsageDialer } from './frames.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

export const USAGE_REPORT_DEFAULTS = {
  /** a statement per lease this often (bounded: 1 s to 1 h) */
  intervalMs: 60_000,
  /** each exchange's deadline */
  timeoutMs: 10_000
}

export interface UsageReporterDeps {
  key: Ed25519PrivateKey
  self: PeerId
  dialer: UsageDialer
  ledger: Pick<LedgerService, 'recordUsage'>
  now?: () => number
  timeoutMs?: number
}

export type UsageReport =
  | { outcome: 'recorded', claimed: UsageFigures, signed: Usage }
  | { outcome: 'refused', claimed: UsageFigures, code: string, message: string }

const MIN_INTERVAL_MS = 1_000
const MAX_INTERVAL_MS = 3600_000

export class UsageReporter {
  private readonly accounts = new Map<string, UsageAccount>()
  private readonly now: () => number
  private timer?: NodeJS.Timeout
  private running = false
  /** the last outcome of each lease (status, tests) */
  readonly last = new Map<string, UsageReport>()

  constructor (private readonly deps: UsageReporterDeps) {
    this.now = deps.now ?? Date.now
  }

  /** Starts reporting a lease; `counts` is what the host counted through it. */
  open (terms: Omit<LeaseTerms, 'provider'>, counts: () => UsageCounts): UsageAccount {
    const account = new UsageAccount({ ...terms, provider: this.deps.self }, counts)
    this.accounts.set(toHex(terms.leaseId), account)
    return account
  }

  close (leaseId: Uint8Array): void {
    this.accounts.delete(toHex(leaseId))
  }

  /** A lease the host runs (ids as exec gives them): its counts are the host's. */
  openHosted (leaseIdHex: string, renter: string, priceMicroUsdPerGpuHour: number, counts: UsageCounts): void {
    this.open(
      {
        leaseId: fromHex(leaseIdHex),
        renter: peerIdFromString(renter),
        gpus: 1,
        priceMicroUsdPerGpuHour,
        since: this.now()
      },
      () => counts
    )
  }

  /** The lease ended: one last statement, then its account closes. */
  closeHosted (leaseIdHex: string): void {
    const leaseId = fromHex(leaseIdHex)
    void this.report(leaseId).catch(() => {}).finally(() => { this.close(leaseId) })
  }

  /** Reports every open lease every `intervalMs` (clamped to 1 s .. 1 h), one exchange at a time. */
  start (intervalMs = USAGE_REPORT_DEFAULTS.intervalMs): void {
    const every = Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, intervalMs))
    this.timer = setInterval(() => {
      if (this.running) return
      this.running = true
      void this.reportAll().finally(() => { this.running = false })
    }, every)
    this.timer.unref()
  }

  stop (): void {
    clearInterval(this.timer)
  }

  async reportAll (): Promise<void> {
    for (const account of [...this.accounts.values()]) await this.report(account.terms.leaseId).catch(() => {})
  }

  /** One statement for the lease now: propose, sign the renter's figures, record, hand over. */
  async report (leaseId: Uint8Array): Promise<UsageReport> {
    const account = this.accounts.get(toHex(leaseId))
    if (account == null) throw new Error(`no open lease ${toHex(leaseId)}`)
    const { terms } = account
    const start = account.nextStart
    // a statement covers at most 24 h: after a long silence (renter unreachable) the lease catches up a day at a time
    const end = Math.min(start + MAX_USAGE_INTERVAL_MS, Math.max(start + 1, this.now()))
    const claimed = account.figures(start, end)
    const proposal = encodeStatement({
      leaseId,
      provider: this.deps.self.toMultihash().bytes,
      renter: terms.renter.toMultihash().bytes,
      intervalStart: start,
      intervalEnd: end,
      ...claimed,
      priceMicroUsdPerGpuHour: terms.priceMicroUsdPerGpuHour
    })
    const timeoutMs = this.deps.timeoutMs ?? USAGE_REPORT_DEFAULTS.timeoutMs
    let report: UsageReport
    try {
      const answer = await exchange(this.deps.dialer, terms.renter, { proposal: { statement: proposal } }, timeoutMs)
      const cs = answer.countersigned
      if (cs == null) throw usageError('PROTOCOL', 'the renter did not answer a proposal with Countersigned')
      const usage = decodeStatement(cs.statement)
      // what the renter signed must be this lease's next interval, within what we proposed
      if (
        toHex(usage.leaseId) !== toHex(leaseId) ||
        toHex(usage.provider) !== toHex(this.deps.self.toMultihash().bytes) ||
        usage.intervalStart < start ||
        usage.intervalEnd > end
      ) {
        throw usageError('BAD_STATEMENT', 'the countersigned statement is not of the proposed interval')
      }
      if (!await verifyStatementSignature(usage, 'renter', cs.statement, cs.renterSignature)) throw usageError('BAD_SIGNATURE', 'the renter\'s signature does not verify')
      const providerSignature = signStatement(this.deps.key, cs.statement)
      await this.deps.ledger.recordUsage(encodeCoSigned(cs.statement, providerSignature, cs.renterSignature))
      account.settle(usage, cs.statement)
      await exchange(
        this.deps.dialer,
        terms.renter,
        { signed: { statement: cs.statement, providerSignature, renterSignature: cs.renterSignature } },
        timeoutMs
      )
      report = { outcome: 'recorded', claimed, signed: usage }
    } catch (err: any) {
      report = { outcome: 'refused', claimed, code: isUsageError(err) ? err.wireCode : String(err?.code ?? 'ERROR'), message: String(err?.message ?? err) }
    }
    this.last.set(toHex(leaseId), report)
    return report
  }
}

function fromHex (hex: string): Uint8Array {
  return fromString(hex, 'base16')
}
