/**
 * Helpers for the exec specs: signed job requests and awards without an auction, the
 * services an in-process provider needs to run jobs, what a provider's ledger holds of its
 * attestations, misbehaving providers (in-process, or joined to a multi-process network as a
 * bidding market provider), `idlegrid submit` as a child process, and saved receipts.
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { DOMAIN, PROTOCOL } from '../../protocols/ids.js'
import { SignedEnvelope } from '../../protocols/envelope.js'
import { JobFrame, JobStatus, type Receipt } from '../../protocols/job.js'
import { Award, JobRequest, PricingRule } from '../../protocols/market.js'
import { loadProviderSetup, type Tier } from '../../src/capability/index.js'
import { buildNode } from '../../src/compose/index.js'
import { BIN_PATH } from '../utils/index.js'
import { resolveConfig } from '../../src/config/index.js'
import { fileSetDigest } from '../../src/exec/shared/digest.js'
import { CAPACITY_SERVICE } from '../../src/capability/index.js'
import { slotCapacity } from '../../src/exec/provider/capacity.js'
import { isStreamError } from '../../src/exec/errors.js'
import { FrameChannel, frameKind } from '../../src/exec/shared/job-stream.js'
import { SlotScheduler } from '../../src/exec/provider/scheduler.js'
import { DiskBudget } from '../../src/exec/provider/admission.js'
import { defaultDiskBudgetBytes, EXEC_DEFAULTS, EXEC_SERVICE, type ExecServiceInit } from '../../src/exec/provider/job-service-init.js'
import { jobExecService, type JobExecService } from '../../src/exec/provider/job-service.js'
import { openReceipt, signAttestation } from '../../src/exec/shared/records.js'
import { ProcessRunner } from '../../src/exec/runners/index.js'
import { messageHash, sealEnvelope, sha256, type Signed } from '../../src/identity/index.js'
import { LEDGER_SERVICE, type LedgerService } from '../../src/ledger/index.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import { openAward } from '../../src/market/shared/award-check.js'
import { MARKET_PROVIDER_SERVICE, marketProvider } from '../../src/market/provider/provider-service.js'
import { startInProcessNetwork, tempDir, type InProcessNetwork } from '../utils/index.js'
import { type runAttempt, type AwardedJob, type JobPayload } from '../../src/exec/renter/attempt.js'
import type { IdlegridNode } from '../../src/node/index.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

const TIERS: Record<Tier, JobRequest.Tier> = {
  gold: JobRequest.Tier.GOLD,
  silver: JobRequest.Tier.SILVER,
  bronze: JobRequest.Tier.BRONZE
}

export interface AwardOptions {
  tier?: Tier
  attempt?: number
  jobId?: Uint8Array
  /** the auction's nonce (default a fresh one) */
  nonce?: Uint8Array
  /** who signs (default the renter) */
  signer?: { privateKey: Ed25519PrivateKey, peerId: PeerId }
  expiresInMs?: number
  minPreemptionNoticeMs?: number
  /** JobRequest.gpus (default 0: one GPU) */
  gpus?: number
  /** JobRequest.dataset_digests and dataset_bytes (default none) */
  datasets?: { digests: Uint8Array[], bytes: bigint }
}

/** A job request and an award for `winner`, signed by `renter` as the market would. */
export function makeAward (
  renter: { privateKey: Ed25519PrivateKey, peerId: PeerId },
  winner: PeerId,
  opts: AwardOptions = {}
): AwardedJob {
  const signer = opts.signer ?? renter
  const now = Date.now()
  const jobId = opts.jobId ?? new Uint8Array(randomBytes(16))
  const nonce = opts.nonce ?? new Uint8Array(randomBytes(16))
  const jobRequest: JobRequest = {
    jobId,
    renter: signer.peerId.toMultihash().bytes,
    tier: TIERS[opts.tier ?? 'silver'],
    workload: 'evaluation',
    gpus: opts.gpus ?? 0,
    image: '',
    estDurationMs: 60_000n,
    constraints: { minVramMib: 0, gpuModels: [], regions: [], residency: '', maxPriceMicroUsd: 0n, maxLatencyMs: 0, minReliabilityPpm: 0, preemptible: opts.tier === 'bronze', minPreemptionNoticeMs: opts.minPreemptionNoticeMs ?? 0, excludeSimulated: false },
    datasetDigests: opts.datasets?.digests ?? [],
    ...(opts.datasets != null ? { datasetBytes: opts.datasets.bytes } : {}),
    bidWindowMs: 500,
    createdAt: BigInt(now),
    expiresAt: BigInt(now + 5 * 60_000),
    nonce,
    pricingRule: PricingRule.FIRST_PRICE,
    renterAddrs: []
  }
  const award: Award = {
    jobId,
    renter: signer.peerId.toMultihash().bytes,
    winner: winner.toMultihash().bytes,
    clearingPriceMicroUsd: 1_500_000n,
    pricingRule: PricingRule.FIRST_PRICE,
    bidsDigest: sha256(''),
    runnerUp: [],
    ranking: [],
    reliabilityWeightPpm: 0,
    latencyWeightPpm: 0,
    localityWeightPpm: 0,
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
 * The services an in-process provider needs to run jobs: the job service and those it
 * depends on, a real ledger (in `dataDir`), a real market provider (without a profile it
 * bids on nothing) and the capacity service over the job service's slot scheduler.
 */
export function execProviderServices (
  init: ExecServiceInit,
  dataDir: string
): Record<string, (components: any) => unknown> {
  const scheduler = init.scheduler ?? new SlotScheduler({ gpus: init.gpus, graceMs: init.graceMs })
  // the job service and the bid engine share one disk budget, as the composition root builds them
  const disk = init.disk ?? new DiskBudget(init.diskBudgetBytes ?? defaultDiskBudgetBytes(init))
  if (init.inputCache != null) disk.includeCache(init.inputCache)
  return {
    [LEDGER_SERVICE]: ledgerService({ dataDir, role: 'provider', flushOnStopMs: 0 }),
    [MARKET_PROVIDER_SERVICE]: marketProvider({ profile: () => undefined }),
    [CAPACITY_SERVICE]: slotCapacity(
      scheduler,
      { budget: disk, outputBoundBytes: init.maxOutputBytes ?? EXEC_DEFAULTS.maxOutputBytes },
      init.inputCache
    ),
    [EXEC_SERVICE]: jobExecService({ ...init, scheduler, disk })
  }
}

/**
 * Three providers and two renters in this process, every renter connected to every provider
 * (the market's accept stream would have connected them). Providers 0 and 1 run jobs with
 * the process runner on one simulated GPU each: 0 only awards it accepted, 1 any award (the
 * market is not in these tests); provider 2 runs no job service (tests make it misbehave).
 */
export async function startJobNetwork (dir: string): Promise<InProcessNetwork> {
  // jobs run as another user when we are root: it must pass through to the work roots
  await chmod(dir, 0o711)
  const init = (i: number): ExecServiceInit => ({
    runner: new ProcessRunner(),
    gpus: [{ index: 0, uuid: `GPU-sim-h100-${i}`, simulated: true, modelKey: 'h100-80gb' }],
    workRoot: join(dir, `work-${i}`),
    graceMs: 3_000,
    keepaliveMs: 500,
    idleMs: 10_000,
    requireAccepted: i !== 1
  })
  const net = await startInProcessNetwork({
    providers: 3,
    renters: 2,
    extensions: (role, i) => role === 'provider' && i < 2 ? { services: execProviderServices(init(i), join(dir, `provider-${i}`)) } : {}
  })
  for (const r of net.renters) for (const p of net.providers) await r.libp2p.dial(p.libp2p.getMultiaddrs()[0] as any)
  return net
}

/**
 * A job with two real inputs (one of 1.5 MB, in a subdirectory) that upper-cases one and copies the
 * other to its outputs.
 */
export async function copyJob (dir: string): Promise<JobPayload> {
  await mkdir(join(dir, 'in', 'data'), { recursive: true })
  await writeFile(join(dir, 'in', 'a.txt'), 'hello idlegrid\n')
  await writeFile(join(dir, 'in', 'data', 'b.bin'), Buffer.alloc(1_500_000, 42))
  return {
    runtime: { command: ['/bin/sh', '-c', 'tr a-z A-Z < inputs/a.txt > outputs/upper.txt && cp inputs/data/b.bin outputs/b.bin && echo done'], timeoutMs: 20_000 },
    inputs: [{ path: 'a.txt', file: join(dir, 'in', 'a.txt') }, { path: 'data/b.bin', file: join(dir, 'in', 'data', 'b.bin') }]
  }
}

/** A node's job service. */
export function execOf (node: IdlegridNode): JobExecService {
  return (node.libp2p.services as Record<string, unknown>)[EXEC_SERVICE] as JobExecService
}

/** What the node's own ledger feed holds of its attestations for a job (hex id): the ledger's entry summaries. */
export async function attestationsInLedger (
  node: IdlegridNode,
  jobIdHex: string
): Promise<Array<Record<string, unknown>>> {
  const ledger = (node.libp2p.services as Record<string, unknown>)[LEDGER_SERVICE] as LedgerService
  const { entries } = await ledger.show(node.peerId.toString(), 1_000)
  return entries.filter(e => e.kind === 'attestation' && e.summary.job === jobIdHex).map(e => e.summary)
}

export type Misbehaviour = 'oversized-frame' | 'forged-attestation' | 'bad-output' | 'vanish-after-accept' |
  /** 64 MiB of log (lines of 64 KiB), then a proper result */
  'huge-log' |
  /** 5,000 one-byte output files (the renter's default limit is 4,096) */
  'many-files' |
  /** an output 40 directories deep (the renter's default limit is 32) */
  'deep-dirs' |
  /** Progress frames every 100 ms and never a Result (until the renter gives up) */
  'endless-progress' |
  /** terminal escape sequences in a log line and an output file name, then a proper result */
  'escape-sequences' |
  /** a proper run, but an attestation (properly signed) naming other inputs (the empty set) than the renter sent */
  'wrong-input-digest' |
  /** Accepted right after Start, then reads nothing more (the inputs pile up against the muxer window) */
  'accept-at-start' |
  /** reads Start, then neither reads nor answers (for 20 s): the inputs pile up against the muxer window */
  'stall-inputs'

/**
 * What 'escape-sequences' sends: a log line that sets the terminal title and clears the screen, and
 * an output name in red.
 */
export const ESCAPES = { line: 'hello \u001b]0;pwned\u0007\u001b[2J\u009b31m', path: 'red\u001b[31m.txt' }

/**
 * What each misbehaving mode last heard from the renter after its attestation: the frame kind
 * ('receipt'), the Error code the renter sent (e.g. 'BAD_ATTESTATION'), or 'end'.
 */
export const renterAnswers = new Map<Misbehaviour, string>()

/**
 * Serves /idlegrid/job/1.0.0 on `node` like a provider that reads the job properly and then
 * misbehaves in one way.
 */
export async function misbehavingProvider (
  node: IdlegridNode,
  mode: Misbehaviour,
  forger?: { privateKey: Ed25519PrivateKey, peerId: PeerId }
): Promise<void> {
  // it speaks only job/1.0.0 (as a provider from before the input cache): renters fall back to it
  await node.libp2p.unhandle(PROTOCOL.jobCached)
  await node.libp2p.handle(PROTOCOL.job, ({ stream, connection }) => {
    void (async () => {
      const ch = new FrameChannel(stream, { idleMs: 10_000 })
      try {
        const start = (await ch.next())?.start as JobFrame.Start
        const inputs = start.inputs
        if (mode === 'stall-inputs') {
          await new Promise(resolve => setTimeout(resolve, 20_000))
          return
        }
        if (mode === 'accept-at-start') {
          await ch.send({ accepted: { at: BigInt(Date.now()) } })
          return
        }
        // every input chunk, up to InputEnd (each read bounded by the channel's idle time)
        for (let frame = await ch.next(); frame?.inputEnd == null; frame = await ch.next()) {
          if (frame == null) throw new Error('the renter left before InputEnd')
        }
        await ch.send({ accepted: { at: BigInt(Date.now()) } })
        if (mode === 'vanish-after-accept') { ch.abort(new Error('gone')); return }
        if (mode === 'oversized-frame') {
          await ch.sendRaw(new Uint8Array(2 * 1024 * 1024))
          await ch.end()
          return
        }
        const data = new TextEncoder().encode('real output\n')
        const files: Array<{ path: string, data: Uint8Array }> = [{ path: 'out.txt', data }]
        if (mode === 'huge-log') {
          const line = 'x'.repeat(64 * 1024)
          for (let i = 0; i < 1024; i++) {
            await ch.send({ log: { stream: JobFrame.Log.Stream.STDOUT, line, at: BigInt(Date.now()) } })
          }
        } else if (mode === 'many-files') {
          for (let i = 0; i < 5_000; i++) files.push({ path: `many/f${i}.txt`, data: Uint8Array.of(i % 256) })
        } else if (mode === 'deep-dirs') {
          files.push({ path: `${Array.from({ length: 40 }, (_, i) => `d${i}`).join('/')}/deep.txt`, data })
        } else if (mode === 'endless-progress') {
          const started = Date.now()
          while (true) {
            await ch.send({ progress: { at: BigInt(Date.now()), elapsedMs: BigInt(Date.now() - started) } })
            await new Promise(resolve => setTimeout(resolve, 100))
          }
        } else if (mode === 'escape-sequences') {
          await ch.send({ log: { stream: JobFrame.Log.Stream.STDOUT, line: ESCAPES.line, at: BigInt(Date.now()) } })
          files.push({ path: ESCAPES.path, data })
        }
        for (const f of files) await ch.send({ outputChunk: { path: f.path, offset: 0n, data: f.data } })
        const sent = files.map(f => ({ path: f.path, size: BigInt(f.data.length), sha256: sha256(f.data) }))
        const claimed = mode === 'bad-output' ? [{ path: 'out.txt', size: 12n, sha256: sha256('other output') }] : sent
        await ch.send({ result: { status: JobStatus.COMPLETED, exitCode: 0, outputs: claimed } })
        const { message: award, hash, signer } = openAward(start.award)
        const key = mode === 'forged-attestation' && forger != null ? forger : { privateKey: node.privateKey, peerId: node.peerId }
        const attestation = signAttestation(key.privateKey, mode === 'forged-attestation' && forger != null ? node.peerId : key.peerId, {
          jobId: award.jobId,
          renter: signer,
          inputDigest: fileSetDigest(mode === 'wrong-input-digest' ? [] : inputs),
          outputDigest: fileSetDigest(claimed),
          startedAt: Date.now(),
          endedAt: Date.now(),
          status: JobStatus.COMPLETED,
          exitCode: 0,
          gpus: [{ uuid: 'GPU-fake', model: 'h100-80gb' }],
          telemetry: { avgUtilPpm: 0, maxTempC: 0, energyMj: 0n, samples: 0, simulated: true },
          awardHash: hash,
          preemptible: false
        })
        await ch.send({ attestation: attestation.envelope })
        void connection
        const answer = await ch.next().catch((err: unknown) => err) // the receipt, or the renter's Error
        renterAnswers.set(mode, isStreamError(answer) ? answer.wireCode : answer == null ? 'end' : answer instanceof Error ? answer.message : frameKind(answer as JobFrame))
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
export async function submitJob (
  dataDir: string,
  cwd: string,
  jobFile: string,
  extra: string[] = [],
  timeoutMs = 150_000
): Promise<Submitted> {
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
export async function openSavedReceipt (
  dir: string,
  expect: { renter: PeerId, provider: PeerId, jobId: Uint8Array }
): Promise<Signed<Receipt>> {
  const attestation = SignedEnvelope.decode(await readFile(join(dir, 'attestation.bin')))
  return openReceipt(await readFile(join(dir, 'receipt.bin')), { ...expect, attestationHash: messageHash(DOMAIN.attestation, attestation.payload) })
}

/** What a suite on the in-process job network uses; filled by useJobNetwork's before hook. */
export interface JobNetworkSuite {
  net: InProcessNetwork
  /** the suite's temporary directory */
  dir: string
  /** copyJob's job, with real inputs */
  payload: JobPayload
  renter: (i?: number) => IdlegridNode
  attemptOpts: (dir: string, i?: number) => Parameters<typeof runAttempt>[2]
}

/** Registers mocha hooks that start the job network (startJobNetwork) before a suite's tests and stop it after. */
export function useJobNetwork (prefix: string): JobNetworkSuite {
  let tmp: { path: string, cleanup: () => Promise<void> } | undefined
  const suite: JobNetworkSuite = {
    net: undefined as unknown as InProcessNetwork,
    dir: '',
    payload: undefined as unknown as JobPayload,
    renter: (i = 0) => suite.net.renters[i] as IdlegridNode,
    attemptOpts: (dir, i = 0) => ({
      libp2p: suite.renter(i).libp2p,
      privateKey: suite.renter(i).privateKey,
      peerId: suite.renter(i).peerId,
      dir: join(suite.dir, dir),
      idleMs: 10_000
    })
  }
  before(async () => {
    const made = await tempDir(prefix)
    tmp = made
    suite.dir = made.path
    suite.net = await startJobNetwork(made.path)
    suite.payload = await copyJob(made.path)
  })
  after(async () => {
    await suite.net?.stop()
    await tmp?.cleanup()
  })
  return suite
}
