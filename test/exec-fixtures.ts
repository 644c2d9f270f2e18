/**
 * Helpers for the exec specs: signed job requests and awards without an auction, misbehaving
 * providers (in-process, or joined to a multi-process network as a bidding market provider),
 * `idlegrid submit` as a child process, and saved receipts.
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { DOMAIN, PROTOCOL } from '../protocols/ids.js'
import { SignedEnvelope } from '../protocols/envelope.js'
import { type JobFrame, JobStatus, type Receipt } from '../protocols/job.js'
import { Award, JobRequest, PricingRule } from '../protocols/market.js'
import { loadProviderSetup } from '../src/capability/index.js'
import { buildNode } from '../src/cli/build-node.js'
import { BIN_PATH } from '../src/cli/local-network.js'
import { resolveConfig } from '../src/config/index.js'
import { fileSetDigest, FrameChannel, openReceipt, signAttestation, type AwardedJob, type AwardSource, type SignedRecord, type Tier } from '../src/exec/index.js'
import { messageHash, sealEnvelope, sha256 } from '../src/identity/index.js'
import type { IdlegridNode } from '../src/node/index.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

const TIERS: Record<Tier, JobRequest.Tier> = { gold: JobRequest.Tier.GOLD, silver: JobRequest.Tier.SILVER, bronze: JobRequest.Tier.BRONZE }

export interface AwardOptions {
  tier?: Tier
  attempt?: number
  jobId?: Uint8Array
  /** who signs (default the renter) */
  signer?: { privateKey: Ed25519PrivateKey, peerId: PeerId }
  expiresInMs?: number
  minPreemptionNoticeMs?: number
}

/** A job request and an award for `winner`, signed by `renter` as the market would. */
export function makeAward (renter: { privateKey: Ed25519PrivateKey, peerId: PeerId }, winner: PeerId, opts: AwardOptions = {}): AwardedJob {
  const signer = opts.signer ?? renter
  const now = Date.now()
  const jobId = opts.jobId ?? new Uint8Array(randomBytes(16))
  const nonce = new Uint8Array(randomBytes(16))
  const jobRequest: JobRequest = {
    jobId,
    renter: signer.peerId.toMultihash().bytes,
    tier: TIERS[opts.tier ?? 'silver'],
    workload: 'evaluation',
    image: '',
    estDurationMs: 60_000n,
    constraints: { minVramMib: 0, gpuModels: [], regions: [], residency: '', maxPriceMicroUsd: 0n, maxLatencyMs: 0, minReliabilityPpm: 0, preemptible: opts.tier === 'bronze', minPreemptionNoticeMs: opts.minPreemptionNoticeMs ?? 0, excludeSimulated: false },
    datasetDigests: [],
    bidWindowMs: 500,
    createdAt: BigInt(now),
    expiresAt: BigInt(now + 5 * 60_000),
    nonce,
    pricingRule: PricingRule.FIRST_PRICE
  }
  const award: Award = {
    jobId,
    renter: signer.peerId.toMultihash().bytes,
    winner: winner.toMultihash().bytes,
    clearingPriceMicroUsd: 1_500_000n,
    pricingRule: PricingRule.FIRST_PRICE,
    bidsDigest: sha256(''),
    runnerUp: [],
    acceptDeadline: BigInt(now + 3_000),
    createdAt: BigInt(now),
    expiresAt: BigInt(now + (opts.expiresInMs ?? 5 * 60_000)),
    attempt: opts.attempt ?? 1,
    validBids: 1,
    winnerBidHash: sha256('bid'),
    jobNonce: nonce
  }
  return {
    jobRequest: sealEnvelope(signer.privateKey, signer.peerId, DOMAIN.jobRequest, JobRequest.encode(jobRequest)),
    award: sealEnvelope(signer.privateKey, signer.peerId, DOMAIN.award, Award.encode(award))
  }
}

/**
 * Awards the first provider of `providers` not excluded, in order, as a stand-in for the
 * market's auction (each award names the same job id). `onAward` sees every award given.
 */
export function listAwards (renter: IdlegridNode, providers: PeerId[], opts: { tier?: Tier, jobId?: Uint8Array, onAward?: (winner: PeerId, awarded: AwardedJob) => void } = {}): AwardSource & { jobId: Uint8Array } {
  const jobId = opts.jobId ?? new Uint8Array(randomBytes(16))
  return {
    jobId,
    next: async ({ exclude, attempt }) => {
      const winner = providers.find(p => !exclude.includes(p.toString()))
      if (winner == null) throw new Error('no provider left')
      const awarded = makeAward(renter, winner, { tier: opts.tier, attempt, jobId })
      opts.onAward?.(winner, awarded)
      return awarded
    }
  }
}

export type Misbehaviour = 'oversized-frame' | 'forged-attestation' | 'bad-output' | 'vanish-after-accept'

/**
 * Serves /idlegrid/job/1.0.0 on `node` like a provider that reads the job properly and then
 * misbehaves in one way.
 */
export async function misbehavingProvider (node: IdlegridNode, mode: Misbehaviour, forger?: { privateKey: Ed25519PrivateKey, peerId: PeerId }): Promise<void> {
  await node.libp2p.handle(PROTOCOL.job, ({ stream, connection }) => {
    void (async () => {
      const ch = new FrameChannel(stream, { idleMs: 10_000 })
      try {
        const start = (await ch.next())?.start as JobFrame.Start
        const inputs = start.inputs
        while ((await ch.next())?.inputEnd == null) { /* read every input chunk */ }
        await ch.send({ accepted: { at: BigInt(Date.now()) } })
        if (mode === 'vanish-after-accept') { ch.abort(new Error('gone')); return }
        if (mode === 'oversized-frame') {
          await ch.sendRaw(new Uint8Array(2 * 1024 * 1024))
          await ch.end()
          return
        }
        const data = new TextEncoder().encode('real output\n')
        await ch.send({ outputChunk: { path: 'out.txt', offset: 0n, data } })
        const sent = [{ path: 'out.txt', size: BigInt(data.length), sha256: sha256(data) }]
        const claimed = mode === 'bad-output' ? [{ path: 'out.txt', size: 12n, sha256: sha256('other output') }] : sent
        await ch.send({ result: { status: JobStatus.COMPLETED, exitCode: 0, outputs: claimed } })
        const { openAward } = await import('../src/market/award-check.js')
        const { message: award, hash, signer } = openAward(start.award)
        const key = mode === 'forged-attestation' && forger != null ? forger : { privateKey: node.privateKey, peerId: node.peerId }
        const attestation = signAttestation(key.privateKey, mode === 'forged-attestation' && forger != null ? node.peerId : key.peerId, {
          jobId: award.jobId,
          renter: signer,
          inputDigest: fileSetDigest(inputs),
          outputDigest: fileSetDigest(claimed),
          startedAt: Date.now(),
          endedAt: Date.now(),
          status: JobStatus.COMPLETED,
          exitCode: 0,
          gpu: { uuid: 'GPU-fake', model: 'h100-80gb' },
          telemetry: { avgUtilPpm: 0, maxTempC: 0, energyMj: 0n, samples: 0, simulated: true },
          awardHash: hash,
          preemptible: false
        })
        await ch.send({ attestation: attestation.envelope })
        void connection
        await ch.next().catch(() => undefined) // the receipt
        await ch.close()
      } catch {
        ch.abort()
      }
    })()
  })
}

export interface JoinedMisbehavingOptions {
  mode: Misbehaviour
  dataDir: string
  /** bootstrap multiaddrs of the network to join */
  bootstrap: string[]
  /** USD per GPU-hour; below the honest providers' so this node wins the first auction */
  priceFloor: string
  forger?: { privateKey: Ed25519PrivateKey, peerId: PeerId }
}

/**
 * A provider node in this process built by the CLI's composition root (simulated H100, eu-west,
 * process runner), so it advertises, bids and accepts awards like `idlegrid provider`; its job
 * stream is then replaced by misbehavingProvider(`mode`).
 */
export async function joinMisbehavingProvider (opts: JoinedMisbehavingOptions): Promise<IdlegridNode> {
  const config = resolveConfig({ role: 'provider', flags: { dataDir: opts.dataDir, listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: opts.bootstrap, heartbeatSeconds: 1 } })
  const { profile } = await loadProviderSetup({ raw: config.provider, flags: { region: 'eu-west', 'price-floor': opts.priceFloor }, simulateGpu: ['H100:80'] })
  const node = await buildNode(config, { provider: { profile, runner: 'process' } })
  try {
    await node.libp2p.unhandle(PROTOCOL.job)
    await misbehavingProvider(node, opts.mode, opts.forger)
  } catch (err) {
    await node.stop()
    throw err
  }
  return node
}

export interface Submitted { code: number | null, summary: Record<string, any>, stderr: string }

/** `idlegrid submit JOB --json` against the node on `dataDir`, run in `cwd`; the last JSON line is the summary. */
export async function submitJob (dataDir: string, cwd: string, jobFile: string, extra: string[] = [], timeoutMs = 150_000): Promise<Submitted> {
  return await new Promise(resolve => {
    execFile(process.execPath, [BIN_PATH, 'submit', jobFile, '--json', '--data-dir', dataDir, ...extra], { cwd, timeout: timeoutMs, env: { ...process.env, IDLEGRID_BOOTSTRAP: '', IDLEGRID_DATA_DIR: '' } }, (err, stdout, stderr) => {
      const lines = stdout.trim().split('\n').filter(l => l.startsWith('{'))
      let summary: Record<string, any> = {}
      try { summary = JSON.parse(lines[lines.length - 1] ?? '{}') } catch {}
      resolve({ code: err == null ? 0 : (err as any).code ?? null, summary, stderr })
    })
  })
}

/** Opens the receipt.bin an attempt saved in `dir`, checked against the attestation.bin beside it. */
export async function openSavedReceipt (dir: string, expect: { renter: PeerId, provider: PeerId, jobId: Uint8Array }): Promise<SignedRecord<Receipt>> {
  const attestation = SignedEnvelope.decode(await readFile(join(dir, 'attestation.bin')))
  return openReceipt(await readFile(join(dir, 'receipt.bin')), { ...expect, attestationHash: messageHash(DOMAIN.attestation, attestation.payload) })
}
