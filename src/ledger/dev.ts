/**
 * Development helpers: signed attestation and receipt envelopes built from real keys, for
 * tests, benchmarks and the `ledger.appendTestJob` control method (offered only by a node
 * started with --dev-ledger-methods). Nothing here runs in a normal node.
 */

import { randomBytes } from 'node:crypto'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { DOMAIN } from '../../protocols/ids.js'
import { Attestation, JobStatus, Receipt } from '../../protocols/job.js'
import { toHex } from '../common/index.js'
import { messageHash, sealEnvelope, sha256 } from '../identity/index.js'
import { LedgerEntry, sealEntry } from './entries/entry.js'
import type { LedgerIngest } from './ingest/ingest.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

export interface Signer {
  key: Ed25519PrivateKey
  peerId: PeerId
}

export type TestOutcome = 'ok' | 'failed' | 'bad-output' | 'timeout' | 'preempted'

export interface TestJobOptions {
  provider: Signer
  renter: Signer
  outcome?: TestOutcome
  /** the job could be preempted (bronze); a preempted job that was not is penalised */
  preemptible?: boolean
  /** unix ms of the run's end (default now) */
  at?: number
  jobId?: Uint8Array
  inputDigest?: Uint8Array
  outputDigest?: Uint8Array
  /** the digest the renter received (default: the attested one, or another for bad-output) */
  receivedDigest?: Uint8Array
  pricePaidMicroUsd?: bigint
  durationMs?: number
}

export interface TestJob {
  jobId: Uint8Array
  attestation: Uint8Array
  receipt: Uint8Array
  attestationHash: Uint8Array
}

const OUTCOMES: Record<TestOutcome, Receipt.Outcome> = {
  ok: Receipt.Outcome.OK,
  failed: Receipt.Outcome.FAILED,
  'bad-output': Receipt.Outcome.BAD_OUTPUT,
  timeout: Receipt.Outcome.TIMEOUT,
  preempted: Receipt.Outcome.PREEMPTED
}

const STATUSES: Record<TestOutcome, JobStatus> = {
  ok: JobStatus.COMPLETED,
  failed: JobStatus.FAILED,
  'bad-output': JobStatus.COMPLETED,
  timeout: JobStatus.TIMEOUT,
  preempted: JobStatus.PREEMPTED
}

/** A provider's signed attestation and the renter's signed receipt for it. */
export function signTestJob (opts: TestJobOptions): TestJob {
  const outcome = opts.outcome ?? 'ok'
  const at = opts.at ?? Date.now()
  const duration = opts.durationMs ?? 60_000
  const jobId = opts.jobId ?? new Uint8Array(randomBytes(16))
  const outputDigest = opts.outputDigest ?? sha256(jobId)
  const attestationPayload = Attestation.encode({
    jobId,
    renter: opts.renter.peerId.toMultihash().bytes,
    provider: opts.provider.peerId.toMultihash().bytes,
    inputDigest: opts.inputDigest ?? sha256(''),
    outputDigest,
    startedAt: BigInt(at - duration),
    endedAt: BigInt(at),
    status: STATUSES[outcome],
    exitCode: outcome === 'failed' ? 1 : 0,
    awardHash: sha256(new Uint8Array([...jobId, 1])),
    preemptible: opts.preemptible ?? false
  })
  const attestation = sealEnvelope(opts.provider.key, opts.provider.peerId, DOMAIN.attestation, attestationPayload)
  const attestationHash = messageHash(DOMAIN.attestation, attestationPayload)
  const receipt = sealEnvelope(opts.renter.key, opts.renter.peerId, DOMAIN.receipt, Receipt.encode({
    jobId,
    provider: opts.provider.peerId.toMultihash().bytes,
    renter: opts.renter.peerId.toMultihash().bytes,
    attestationHash,
    outcome: OUTCOMES[outcome],
    latencyMs: BigInt(duration),
    pricePaidMicroUsd: opts.pricePaidMicroUsd ?? 1_000_000n,
    createdAt: BigInt(at),
    receivedOutputDigest: opts.receivedDigest ?? (outcome === 'bad-output' ? sha256(outputDigest) : outputDigest)
  }))
  return { jobId, attestation, receipt, attestationHash }
}

export interface TestJobsRequest {
  count: number
  /** which dev renter (0…99) signs the receipts */
  renterIndex: number
  outcome: TestOutcome
  preemptible: boolean
}

/**
 * The `ledger.appendTestJob` method: this provider signs attestations into its feed and a dev
 * renter (a real key held in memory, one per index) signs the receipts into its own feed,
 * which this node ingests and publishes. Stands in for real jobs in tests and demos.
 */
export class DevJobs {
  private readonly self: Signer
  private readonly ledger: () => LedgerIngest
  private readonly publish: (envelope: Uint8Array) => void
  private readonly renters: Signer[] = []
  private queue: Promise<unknown> = Promise.resolve()

  constructor (self: Signer, ledger: () => LedgerIngest, publish: (envelope: Uint8Array) => void) {
    this.self = self
    this.ledger = ledger
    this.publish = publish
  }

  async append (request: TestJobsRequest): Promise<unknown> {
    const run = this.queue.then(async () => {
      while (this.renters.length <= request.renterIndex) {
        const key = await generateKeyPair('Ed25519')
        this.renters.push({ key, peerId: peerIdFromPrivateKey(key) })
      }
      const renter = this.renters[request.renterIndex]
      const ledger = this.ledger()
      const attestations: string[] = []
      for (let i = 0; i < request.count; i++) {
        const job = signTestJob({
          provider: this.self,
          renter,
          outcome: request.outcome,
          preemptible: request.preemptible
        })
        const attestation = await ledger.append(LedgerEntry.BodyKind.ATTESTATION, job.attestation)
        const head = ledger.store.head(renter.peerId.toString())
        const receipt = sealEntry(renter.key, renter.peerId, {
          seq: (head?.seq ?? 0) + 1,
          prevHash: head?.hash ?? new Uint8Array(0),
          time: Date.now(),
          kind: LedgerEntry.BodyKind.RECEIPT,
          body: job.receipt
        })
        await ledger.ingestOne(receipt.envelope)
        this.publish(receipt.envelope)
        attestations.push(toHex(attestation.hash))
      }
      return {
        provider: this.self.peerId.toString(),
        renter: renter.peerId.toString(),
        jobs: request.count,
        attestations,
        seq: ledger.store.head(this.self.peerId.toString())?.seq
      }
    })
    this.queue = run.catch(() => {})
    return await run
  }
}
