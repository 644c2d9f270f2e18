/**
 * The facts reputation needs (reputation.ts), collected from ledger entries: attestations,
 * receipts paired with them under the receipt rules (entries/receipt-rules.ts), uptime summaries,
 * co-signed usage statements (by statement hash: the copies in both parties' feeds are one) and
 * equivocation slashes. Adding the same entries in any order gives the same facts; adding one
 * twice changes nothing.
 *
 * A fact is kept for every synced job (200,000 entries: 100,000 of each kind), so it holds
 * strings, not byte arrays: each array copied out of an entry was an object, a buffer and a
 * backing store for the collector to trace, ~1 KB an entry in all, and reading them in was about
 * a quarter of a fresh node's sync.
 */

import { Receipt, type JobStatus } from '../../../protocols/job.js'
import { toHex } from '../../common/index.js'
import { decodeStoredBody } from '../entries/body.js'
import { FraudProof, parseAuthor, type LedgerRecord } from '../entries/entry.js'
import { judgeReceipt } from '../entries/receipt-rules.js'
import type { VerifiedUsage } from '../usage/statement.js'

export interface AttestationFact {
  hash: string
  provider: string
  /** the renter's peer id bytes and the job id, hex: a receipt pairs with it when its own are the same */
  pair: string
  preemptible: boolean
  status: JobStatus
  exitCode: number
  /** hex */
  outputDigest: string
  startedAt: number
  endedAt: number
  /** GPUs the job ran on: the attestation's `gpus`, or 1 (its one `gpu`) */
  gpus: number
  /** time of the earliest entry carrying this attestation */
  entryTime: number
}

export interface ReceiptFact {
  /** the receipt entry's hash, for a deterministic choice between duplicates */
  entryHash: string
  renter: string
  provider: string
  attestationHash: string
  /** the receipt's author (peer id bytes) and job id, hex, as AttestationFact.pair */
  pair: string
  outcome: Receipt.Outcome
  /**
   * hex, kept for a BAD_OUTPUT receipt only: the one outcome whose judgement reads it
   * (receipt-rules.ts); '' otherwise, and when the renter received none
   */
  receivedOutputDigest: string
  pricePaidMicroUsd: bigint
  /** the receipt entry's seq in its renter's feed: the first one counts */
  seq: number
  time: number
}

export interface SummaryFact {
  periodStart: number
  periodEnd: number
  availableMs: number
  upMs: number
  busyPpm: number
}

/**
 * The facts reputation needs, collected from ledger entries. Adding the same entries in any
 * order gives the same facts; adding one twice changes nothing.
 */
export class ReputationEvidence {
  private readonly attestations = new Map<string, AttestationFact>()
  private readonly receiptsByProvider = new Map<string, Map<string, ReceiptFact>>()
  private readonly summaries = new Map<string, Map<string, SummaryFact>>()
  private readonly slashedSet = new Set<string>()
  private readonly usage = new Map<string, Map<string, VerifiedUsage>>()
  /** bumped whenever facts about a provider change, for caches */
  private readonly versions = new Map<string, number>()

  /**
   * Adds one stored (verified) entry. Adding it again finds its fact where the first add put it
   * (each kind's facts are keyed by the entry's or the attestation's hash), so no set of the
   * entries seen is kept: at 200,000 entries its lookups were a fifth of this method's time.
   */
  add (record: LedgerRecord): void {
    const body = decodeStoredBody(record)
    switch (body.kind) {
      case 'attestation': {
        const a = body.attestation.message
        const hash = toHex(body.attestation.hash)
        // the same attestation in two entries: the earliest entry dates it, whatever the order seen
        const held = this.attestations.get(hash)
        if (held != null) {
          if (record.time < held.entryTime) held.entryTime = record.time
          this.touch(record.authorId)
          break
        }
        this.attestations.set(hash, {
          hash,
          provider: record.authorId,
          pair: pairOf(a.renter, a.jobId),
          preemptible: a.preemptible,
          status: a.status,
          exitCode: a.exitCode,
          outputDigest: toHex(a.outputDigest),
          startedAt: Number(a.startedAt),
          endedAt: Number(a.endedAt),
          gpus: Math.max(1, a.gpus.length),
          entryTime: record.time
        })
        this.touch(record.authorId)
        break
      }
      case 'receipt': {
        const key = toHex(record.hash)
        const r = body.receipt.message
        const provider = parseAuthor(r.provider)?.id
        if (provider == null) return
        // the attestation's own strings when it is held and they are equal: one copy kept, not two
        const attestationHash = toHex(r.attestationHash)
        const attested = this.attestations.get(attestationHash)
        const pair = pairOf(record.author, r.jobId)
        let map = this.receiptsByProvider.get(provider)
        if (map == null) this.receiptsByProvider.set(provider, map = new Map())
        map.set(key, {
          entryHash: key,
          renter: record.authorId,
          provider,
          attestationHash: attested?.hash ?? attestationHash,
          pair: attested?.pair === pair ? attested.pair : pair,
          outcome: r.outcome,
          receivedOutputDigest: r.outcome === Receipt.Outcome.BAD_OUTPUT ? toHex(r.receivedOutputDigest) : '',
          pricePaidMicroUsd: r.pricePaidMicroUsd,
          seq: record.seq,
          time: record.time
        })
        this.touch(provider)
        break
      }
      case 'heartbeat-summary': {
        const key = toHex(record.hash)
        const s = body.summary
        let map = this.summaries.get(record.authorId)
        if (map == null) this.summaries.set(record.authorId, map = new Map())
        map.set(key, {
          periodStart: Number(s.periodStart),
          periodEnd: Number(s.periodEnd),
          availableMs: Number(s.availableMs),
          upMs: Math.min(Number(s.upMs), Number(s.availableMs), s.heartbeatsSent * s.intervalMs),
          busyPpm: s.busyPpm
        })
        this.touch(record.authorId)
        break
      }
      case 'usage': {
        const v = body.usage
        let map = this.usage.get(v.providerId)
        if (map == null) this.usage.set(v.providerId, map = new Map())
        if (!map.has(v.hash)) {
          map.set(v.hash, v)
          this.touch(v.providerId)
        }
        break
      }
      case 'fraud-proof': {
        // only equivocation slashes (a store from before protocol v2 may hold other kinds)
        if (body.proof.message.kind !== FraudProof.Kind.EQUIVOCATION) break
        const accused = parseAuthor(body.proof.message.accused)?.id
        if (accused != null) {
          this.slashedSet.add(accused)
          this.touch(accused)
        }
        break
      }
    }
  }

  /**
   * Takes out what one entry added: retention dropped it (README §7 "Retention"). Its usage
   * statements stay (a statement is one fact whichever party's feed it came in), and a fraud
   * proof is never dropped.
   */
  forget (record: LedgerRecord): void {
    const key = toHex(record.hash)
    const body = decodeStoredBody(record)
    switch (body.kind) {
      case 'attestation': {
        const hash = toHex(body.attestation.hash)
        if (this.attestations.get(hash)?.provider === record.authorId) this.attestations.delete(hash)
        this.touch(record.authorId)
        break
      }
      case 'receipt': {
        const provider = parseAuthor(body.receipt.message.provider)?.id
        if (provider == null) break
        const map = this.receiptsByProvider.get(provider)
        map?.delete(key)
        if (map?.size === 0) this.receiptsByProvider.delete(provider)
        this.touch(provider)
        break
      }
      case 'heartbeat-summary': {
        const map = this.summaries.get(record.authorId)
        map?.delete(key)
        if (map?.size === 0) this.summaries.delete(record.authorId)
        this.touch(record.authorId)
        break
      }
    }
  }

  isSlashed (peerId: string): boolean {
    return this.slashedSet.has(peerId)
  }

  version (peerId: string): number {
    return this.versions.get(peerId) ?? 0
  }

  /** Providers with any jobs or summaries, sorted. */
  providers (): string[] {
    const ids = new Set<string>([
      ...this.receiptsByProvider.keys(),
      ...this.summaries.keys(),
      ...this.slashedSet,
      ...this.usage.keys()
    ])
    for (const a of this.attestations.values()) ids.add(a.provider)
    return [...ids].sort()
  }

  /**
   * The paired jobs of `provider`: each attestation with the first receipt (in its renter's
   * feed order) that agrees with it.
   */
  jobsOf (provider: string): Array<{ attestation: AttestationFact, receipt: ReceiptFact }> {
    const chosen = new Map<string, ReceiptFact>()
    for (const r of this.receiptsByProvider.get(provider)?.values() ?? []) {
      const a = this.attestations.get(r.attestationHash)
      if (a == null || a.provider !== provider || a.pair !== r.pair) {
        continue
      }
      if (judgeReceipt(a, r) !== 'counts') continue
      // one renter per attestation, so the seqs are of one feed; equal seqs (an equivocation) by hash
      const held = chosen.get(r.attestationHash)
      if (held == null || r.seq < held.seq || (r.seq === held.seq && r.entryHash < held.entryHash)) {
        chosen.set(r.attestationHash, r)
      }
    }
    return [...chosen.values()]
      .map(receipt => ({ attestation: this.attestations.get(receipt.attestationHash) as AttestationFact, receipt }))
      .sort((x, y) => x.receipt.time - y.receipt.time || (x.receipt.entryHash < y.receipt.entryHash ? -1 : 1))
  }

  /** The distinct co-signed usage statements naming `provider` (which of them count: usage/book.ts). */
  usageOf (provider: string): VerifiedUsage[] {
    return [...(this.usage.get(provider)?.values() ?? [])]
  }

  /** Non-overlapping heartbeat summaries of `provider`, by period start. */
  summariesOf (provider: string): SummaryFact[] {
    const all = [...(this.summaries.get(provider)?.values() ?? [])]
      .sort((a, b) => a.periodStart - b.periodStart || a.periodEnd - b.periodEnd || a.upMs - b.upMs)
    const out: SummaryFact[] = []
    let end = -Infinity
    for (const s of all) {
      if (s.periodStart < end) continue
      out.push(s)
      end = s.periodEnd
    }
    return out
  }

  private touch (peerId: string): void {
    this.versions.set(peerId, (this.versions.get(peerId) ?? 0) + 1)
  }
}

/**
 * A renter and a job as one string (a fresh string: the decoded message's fields are views into
 * the buffer the entry came in, a sync's whole 140 KB response, which a view kept would keep too):
 * the hex of the renter's length, the renter and the job id, written once. Joined with `+`, the
 * parts stayed as a tree of three strings, kept for every job, and flattened by each comparison.
 */
function pairOf (renter: Uint8Array, jobId: Uint8Array): string {
  const length = 1 + renter.length + jobId.length
  if (renter.length > 0xff || length > PAIR_SCRATCH.length) return `${toHex(renter)}/${toHex(jobId)}`
  PAIR_SCRATCH[0] = renter.length
  PAIR_SCRATCH.set(renter, 1)
  PAIR_SCRATCH.set(jobId, 1 + renter.length)
  return toHex(PAIR_SCRATCH.subarray(0, length))
}

/** pairOf's bytes, written and read at once (a peer id and a 16-byte job id fit many times over). */
const PAIR_SCRATCH = new Uint8Array(256)

/** Facts from a list of stored entries. */
export function collectEvidence (records: Iterable<LedgerRecord>): ReputationEvidence {
  const evidence = new ReputationEvidence()
  for (const record of records) evidence.add(record)
  return evidence
}
