/**
 * The receipts of one job into the renter's ledger feed. A receipt is the evidence its
 * provider is paid and rated by, so each is written before the job goes on (awaited), and
 * after the last attempt the job waits, bounded, until a peer holding the renter's feed
 * confirms it (the ledger's flush: the peer serves the entry back). A failed write or a
 * missing confirmation is what the summary says, never only a log line.
 */
import type { Receipt } from '../../protocols/job.js'
import type { Signed } from '../identity/index.js'
import type { LedgerService } from '../ledger/index.js'
import type { ReceiptSink } from './run-job.js'
import type { ReceiptLedger } from './summary.js'
import type { Logger } from '@libp2p/interface'

/** How long a job waits for a peer to confirm holding its receipt (default). */
export const RECEIPT_ACK_TIMEOUT_MS = 10_000

/** Progress of the receipts' way to a peer, as a submit event. */
export type ReceiptEvent =
  | { type: 'receipt', state: 'waiting', seq: number, timeoutMs: number }
  | { type: 'receipt', state: 'acknowledged' | 'unconfirmed' | 'not-recorded', seq: number, by: string[] }

export interface LedgerReceiptsOptions {
  ledger: Pick<LedgerService, 'recordReceipt' | 'flush'>
  /** bound on the wait for a peer's confirmation */
  ackTimeoutMs?: number
  onEvent?: (event: ReceiptEvent) => void
  log: Logger
}

export class LedgerReceipts implements ReceiptSink {
  private readonly opts: LedgerReceiptsOptions
  private signed = 0
  private recorded = 0
  private seq = 0
  private error?: string

  constructor (opts: LedgerReceiptsOptions) {
    this.opts = opts
  }

  async record (receipt: Signed<Receipt>): Promise<void> {
    this.signed++
    try {
      const record = await this.opts.ledger.recordReceipt(receipt.envelope)
      this.recorded++
      this.seq = Math.max(this.seq, record.seq)
    } catch (err: any) {
      this.error = String(err?.message ?? err)
      this.opts.log.error('receipt not recorded in the ledger: %e', err)
    }
  }

  async settle (): Promise<ReceiptLedger | undefined> {
    if (this.signed === 0) return undefined
    const state = {
      signed: this.signed,
      recorded: this.recorded,
      seq: this.seq,
      ...(this.error != null ? { error: this.error } : {})
    }
    if (this.recorded === 0) {
      this.opts.onEvent?.({ type: 'receipt', state: 'not-recorded', seq: 0, by: [] })
      return { ...state, acknowledged: false, acknowledgedSeq: 0, by: [], note: `the receipt was not written to this node's ledger: ${this.error ?? 'unknown error'}` }
    }
    const timeoutMs = this.opts.ackTimeoutMs ?? RECEIPT_ACK_TIMEOUT_MS
    this.opts.onEvent?.({ type: 'receipt', state: 'waiting', seq: this.seq, timeoutMs })
    let flushed: Awaited<ReturnType<LedgerService['flush']>>
    try {
      flushed = await this.opts.ledger.flush({ timeoutMs })
    } catch (err: any) {
      this.opts.onEvent?.({ type: 'receipt', state: 'unconfirmed', seq: this.seq, by: [] })
      return { ...state, acknowledged: false, acknowledgedSeq: 0, by: [], note: `no peer could be asked to confirm the receipt: ${String(err?.message ?? err)}` }
    }
    // the flush checks our head, which is at or after our last receipt
    const acknowledged = flushed.acknowledgedSeq >= this.seq
    this.opts.onEvent?.({ type: 'receipt', state: acknowledged ? 'acknowledged' : 'unconfirmed', seq: this.seq, by: acknowledged ? flushed.by : [] })
    return {
      ...state,
      acknowledged,
      acknowledgedSeq: flushed.acknowledgedSeq,
      by: flushed.by,
      ...(acknowledged ? {} : { note: flushed.note ?? `no peer confirmed holding this node's ledger up to entry ${this.seq}` })
    }
  }
}
