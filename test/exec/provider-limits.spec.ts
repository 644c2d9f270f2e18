/**
 * Red team (issue 13, item 5): a renter exhausts the provider. Hostile renters are real
 * in-process nodes speaking /idlegrid/job/1.0.0 frame by frame: they send Start frames for
 * several awards at once, declare large inputs, hold their slot by sending nothing, or send
 * their bytes regardless of the provider's answer.
 */
import { strict as assert } from 'node:assert'
import { createHash, randomBytes } from 'node:crypto'
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { PROTOCOL } from '../../protocols/ids.js'
import { JobFrame } from '../../protocols/job.js'
import { CAPACITY_SERVICE, type CapacitySource, type Tier } from '../../src/capability/index.js'
import { checkRenterSlots, DiskBudget } from '../../src/exec/provider/admission.js'
import { isStartDecline } from '../../src/exec/errors.js'
import { CHUNK_BYTES, FrameChannel, frameKind, type ReceivedFrame } from '../../src/exec/shared/job-stream.js'
import { SlotScheduler } from '../../src/exec/provider/scheduler.js'
import type { Lease } from '../../src/exec/provider/slot-lease.js'
import { type ExecServiceInit } from '../../src/exec/provider/job-service-init.js'
import { runAttempt } from '../../src/exec/renter/attempt.js'
import { MARKET_PROVIDER_SERVICE, parseJobSpec, type MarketProviderService } from '../../src/market/index.js'
import { toJobRequest } from '../../src/market/renter/job-spec.js'
import { ProcessRunner } from '../../src/exec/runners/index.js'
import { recordAttack, startInProcessNetwork, tempDir, waitFor, type InProcessNetwork } from '../utils/index.js'
import { copyJob, execOf, execProviderServices, makeAward } from './fixtures.js'
import type { IdlegridNode } from '../../src/node/index.js'

const MiB = 1024 * 1024

/**
 * Four providers that run any award (no market here): P0 with one GPU and the default
 * limits, P1 with two GPUs and at most one slot per renter, P2 with two GPUs, a 1 MiB output
 * bound and a 4 MiB disk budget, P3 with one GPU and a short input transfer bound (1 s +
 * 1 MiB/s).
 */
function providerInit (dir: string, i: number): ExecServiceInit {
  const gpus = Array.from({ length: i === 0 || i === 3 ? 1 : 2 }, (_, index) => ({ index, uuid: `GPU-sim-limits-${i}-${index}`, simulated: true, modelKey: 'h100-80gb' }))
  return {
    runner: new ProcessRunner(),
    gpus,
    workRoot: join(dir, `work-${i}`),
    graceMs: 3_000,
    keepaliveMs: 500,
    idleMs: 10_000,
    requireAccepted: false,
    ...(i === 1 ? { maxSlotsPerRenter: 1 } : {}),
    ...(i === 2 ? { maxOutputBytes: MiB, diskBudgetBytes: 4 * MiB } : {}),
    ...(i === 3 ? { inputTransfer: { floorMs: 1_000, minBytesPerSecond: MiB } } : {})
  }
}

/** A job stream a hostile renter drives by hand: its Start is sent, and `answer` is the provider's first frame back. */
interface HandStream {
  ch: FrameChannel
  answer: Promise<ReceivedFrame | undefined>
  settled: () => boolean
  /** the inputs it declared, with their bytes */
  data: Buffer
}

/**
 * Sends a Start for a fresh award, declaring one input `in.bin` of `data` (or of `declared` bytes
 * that are never sent).
 */
async function sendStart (
  renter: IdlegridNode,
  provider: IdlegridNode,
  opts: { tier?: Tier, data?: Buffer, declared?: number, command?: string }
): Promise<HandStream> {
  const awarded = makeAward(renter, provider.peerId, { tier: opts.tier ?? 'silver' })
  const data = opts.data ?? Buffer.alloc(0)
  const size = opts.declared ?? data.byteLength
  const sha256 = opts.data != null ? createHash('sha256').update(data).digest() : randomBytes(32)
  const stream = await renter.libp2p.dialProtocol(provider.peerId, PROTOCOL.job)
  const ch = new FrameChannel(stream, { idleMs: 20_000 })
  await ch.send({
    start: {
      award: awarded.award,
      jobRequest: awarded.jobRequest,
      runtime: { image: '', command: ['/bin/sh', '-c', opts.command ?? 'sleep 30'], env: [], timeoutMs: 60_000n, shmSizeMib: 0 },
      inputs: size === 0 ? [] : [{ path: 'in.bin', size: BigInt(size), sha256 }]
    }
  })
  let done = false
  const answer = ch.next(20_000).finally(() => { done = true })
  answer.catch(() => {})
  return { ch, answer, settled: () => done, data }
}

/** Sends the stream's inputs and InputEnd, ignoring a stream the provider already closed. */
async function sendInputs (s: HandStream): Promise<void> {
  try {
    for (let offset = 0; offset < s.data.byteLength; offset += CHUNK_BYTES) {
      await s.ch.send({ inputChunk: { path: 'in.bin', offset: BigInt(offset), data: s.data.subarray(offset, offset + CHUNK_BYTES) } })
    }
    await s.ch.send({ inputEnd: {} })
  } catch {}
}

/** The Rejected frame of a stream's answer (fails on anything else). */
async function rejectedOf (s: HandStream): Promise<JobFrame.Rejected> {
  const frame = await s.answer
  assert.ok(frame != null && frameKind(frame) === 'rejected', `expected Rejected, got ${frame == null ? 'the end' : frameKind(frame)}`)
  return frame.rejected as JobFrame.Rejected
}

const capacityOf = (node: IdlegridNode): CapacitySource =>
  (node.libp2p.services as Record<string, unknown>)[CAPACITY_SERVICE] as CapacitySource
const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }

describe('red team: exec (issue 13)', function () {
  this.timeout(120_000)
  let net: InProcessNetwork
  let tmp: { path: string, cleanup: () => Promise<void> }
  const open: HandStream[] = []

  before(async () => {
    tmp = await tempDir('idlegrid-exec-limits-')
    // jobs run as another user when we are root: it must pass through to the work roots
    await chmod(tmp.path, 0o711)
    net = await startInProcessNetwork({
      providers: 4,
      renters: 2,
      extensions: (role, i) => role === 'provider' ? { services: execProviderServices(providerInit(tmp.path, i), join(tmp.path, `provider-${i}`)) } : {}
    })
    for (const r of net.renters) for (const p of net.providers) await r.libp2p.dial(p.libp2p.getMultiaddrs()[0] as any)
  })

  afterEach(async () => {
    for (const s of open.splice(0)) s.ch.abort()
    // every slot comes back once the hostile streams are gone
    for (const p of net.providers) await waitFor(() => capacityOf(p).freeSlots() === capacityOf(p).totalSlots(), { what: 'the provider\'s slots free again' })
  })

  after(async () => {
    await net?.stop()
    await tmp?.cleanup()
  })

  const renter = (i: number): IdlegridNode => net.renters[i] as IdlegridNode
  const provider = (i: number): IdlegridNode => net.providers[i] as IdlegridNode
  const start = async (...args: Parameters<typeof sendStart>): Promise<HandStream> => {
    const s = await sendStart(...args)
    open.push(s)
    return s
  }

  it('several concurrent awards for one GPU: one holds the slot from its Start, the rest are refused before any input byte', async () => {
    const p = provider(0)
    assert.equal(capacityOf(p).freeSlots(), 1)
    const data = Buffer.alloc(1_500_000, 7)
    const streams = await Promise.all([0, 1, 0, 1].map(async i => await start(renter(i), p, { data })))
    // no input byte sent yet: three are refused, one waits for its inputs on the slot
    await waitFor(() => streams.filter(s => s.settled()).length >= 3, { what: 'three refusals' })
    await sleep(300)
    const waiting = streams.filter(s => !s.settled())
    assert.equal(waiting.length, 1, 'exactly one award holds the slot')
    for (const s of streams.filter(s => s.settled())) {
      const r = await rejectedOf(s)
      assert.equal(r.code, JobFrame.Rejected.Code.NO_CAPACITY)
      assert.match(r.reason, /all 1 slots busy/)
    }
    // the bid engine sees the slot taken while the job is still receiving
    assert.equal(capacityOf(p).freeSlots(), 0)
    assert.ok(execOf(p).jobList().some(j => j.state === 'receiving' && j.gpuIndex === 0))
    // the refused renters send their bytes anyway: none of them lands on the provider's disk
    await Promise.all(streams.map(sendInputs))
    const accepted = await (waiting[0] as HandStream).answer
    assert.equal(accepted == null ? 'the end' : frameKind(accepted), 'accepted')
    const workDirs = (await readdir(join(tmp.path, 'work-0'))).length
    assert.equal(workDirs, 1, 'one work dir: the job that holds the slot')
    recordAttack({ issue: '13.5', attack: '4 concurrent awards for 1 GPU, all sending 1.5 MB of inputs', got: `${streams.length - 1} refused before any byte; ${workDirs} work dir on the provider`, limit: 'slot reserved at Start, before inputs' })
  })

  it('a renter over its slot limit is refused before its bytes; another renter still gets the free slot', async () => {
    const p = provider(1)
    assert.equal(capacityOf(p).freeSlots(), 2)
    const first = await start(renter(0), p, { declared: MiB })
    await waitFor(() => capacityOf(p).freeSlots() === 1, { what: 'the first job holding a slot' })
    const second = await start(renter(0), p, { declared: MiB })
    const r = await rejectedOf(second)
    assert.equal(r.code, JobFrame.Rejected.Code.NO_CAPACITY)
    assert.match(r.reason, /already holds 1 of this provider's slots \(at most 1 per renter\)/)
    const other = await start(renter(1), p, { declared: MiB })
    await waitFor(() => capacityOf(p).freeSlots() === 0, { what: 'the other renter holding the second slot' })
    assert.equal(first.settled(), false)
    assert.equal(other.settled(), false)
  })

  it('the disk budget is reserved at Start: a job that would overfill it is refused before its bytes, one larger than it never fits', async () => {
    const p = provider(2)
    // 2.5 MiB of inputs + the 1 MiB output bound: 3.5 of the 4 MiB budget, held while nothing is sent
    const big = await start(renter(0), p, { declared: 2.5 * MiB })
    await waitFor(() => capacityOf(p).freeSlots() === 1, { what: 'the big job holding a slot' })
    const more = await start(renter(1), p, { declared: MiB })
    const r = await rejectedOf(more)
    assert.equal(r.code, JobFrame.Rejected.Code.NO_CAPACITY)
    assert.match(r.reason, /disk budget full: jobs in progress hold 3670016 of 4194304 bytes, this job needs 2097152/)
    const huge = await start(renter(1), p, { declared: 4 * MiB })
    const r2 = await rejectedOf(huge)
    assert.equal(r2.code, JobFrame.Rejected.Code.INPUT_TOO_LARGE)
    assert.match(r2.reason, /more than this provider's disk budget of 4194304/)
    recordAttack({ issue: '13.5', attack: 'fill the provider\'s disk: declared inputs over the free budget / the whole budget', got: 'NO_CAPACITY / INPUT_TOO_LARGE before any byte', limit: 'disk budget reserved at Start' })
    assert.equal(capacityOf(p).freeSlots(), 1, 'refused jobs hold no slot')
    // the bid engine reads the same budget: 0.5 MiB left cannot take even a job without inputs (the 1 MiB output bound)
    const probe = toJobRequest(parseJobSpec({ name: 'probe', runtime: { command: ['true'] } }), { renter: renter(1).peerId.toMultihash().bytes })
    const market = (): MarketProviderService =>
      (p.libp2p.services as Record<string, unknown>)[MARKET_PROVIDER_SERVICE] as MarketProviderService
    const full = market().explain(probe)
    assert.match(full.bid ? 'bid' : full.detail, /disk budget: jobs in progress leave 524288 bytes, a job needs at least 1048576/)
    // the budget comes back with the job: then a real job with real inputs runs
    big.ch.abort()
    await waitFor(() => capacityOf(p).freeSlots() === 2, { what: 'the big job gone' })
    // the slot is released before the work dir is removed, the disk share after it
    await waitFor(() => capacityOf(p).freeDiskBytes?.() === 4 * MiB, { what: 'the big job\'s disk share back' })
    const freed = market().explain(probe)
    assert.doesNotMatch(freed.bid ? 'bid' : freed.detail, /disk budget/)
    // copyJob's 1.5 MB inputs, but only the small output (the big one is over P2's 1 MiB output bound)
    const payload = { ...await copyJob(join(tmp.path, 'copy')), runtime: { command: ['/bin/sh', '-c', 'tr a-z A-Z < inputs/a.txt > outputs/upper.txt'], timeoutMs: 20_000 } }
    const ok = await runAttempt(makeAward(renter(1), p.peerId), payload, { libp2p: renter(1).libp2p, privateKey: renter(1).privateKey, peerId: renter(1).peerId, dir: join(tmp.path, 'copy-out'), idleMs: 10_000 })
    assert.equal(ok.outcome, 'ok', ok.detail)
  })

  it('once its run has ended a job\'s inputs leave the disk and its share shrinks to the output bound, before its outputs are taken', async () => {
    const p = provider(2)
    // the last spec's job may still hold its share while it ends
    await waitFor(() => capacityOf(p).freeDiskBytes?.() === 4 * MiB, { what: 'P2\'s disk budget all free' })
    // 2.5 MiB of inputs + the 1 MiB output bound: 3.5 of P2's 4 MiB budget from its Start
    const s = await start(renter(0), p, { data: randomBytes(2.5 * MiB), command: 'head -c 100000 inputs/in.bin > outputs/out.bin' })
    await waitFor(() => capacityOf(p).freeDiskBytes?.() === 0.5 * MiB, { what: 'the job holding its inputs and output bound' })
    await sendInputs(s)
    // the renter reads up to the attestation and leaves the provider waiting for its receipt
    const kinds: string[] = []
    for (let i = 0; i < 64 && kinds.at(-1) !== 'attestation'; i++) {
      const frame = i === 0 ? await s.answer : await s.ch.next(20_000)
      assert.ok(frame != null, `the stream ended after ${kinds.join(', ')}`)
      kinds.push(frameKind(frame))
    }
    assert.ok(kinds.includes('outputChunk'), `no output among ${kinds.join(', ')}`)
    assert.equal(capacityOf(p).freeDiskBytes?.(), 3 * MiB, 'only the output bound is held while the outputs and receipt are pending')
    const workRoot = join(tmp.path, 'work-2')
    const jobDirs = await readdir(workRoot)
    assert.equal(jobDirs.length, 1)
    const left = await readdir(join(workRoot, jobDirs[0] as string))
    assert.ok(left.includes('outputs') && !left.includes('inputs'), `the work dir holds ${left.join(', ')}`)
    s.ch.abort()
    await waitFor(() => capacityOf(p).freeDiskBytes?.() === 4 * MiB, { what: 'the job\'s disk share back' })
  })

  it('red team: a job that swaps its inputs/ for a symlink out of its work dir loses only the link when its inputs are removed', async () => {
    const p = provider(0)
    const precious = join(tmp.path, 'precious')
    await mkdir(precious, { recursive: true })
    await writeFile(join(precious, 'keep.txt'), 'the provider\'s own file')
    // the job replaces inputs/ with a link to the directory and says what it did
    const command = `rm -rf inputs && ln -s ${precious} inputs && readlink inputs > outputs/link.txt`
    const payload = { ...await copyJob(join(tmp.path, 'swap')), runtime: { command: ['/bin/sh', '-c', command], timeoutMs: 20_000 } }
    const dir = join(tmp.path, 'swap-out')
    const res = await runAttempt(makeAward(renter(0), p.peerId), payload, {
      libp2p: renter(0).libp2p,
      privateKey: renter(0).privateKey,
      peerId: renter(0).peerId,
      dir,
      idleMs: 10_000
    })
    assert.equal(res.outcome, 'ok', res.detail)
    assert.equal((await readFile(join(dir, 'outputs', 'link.txt'), 'utf8')).trim(), precious, 'the job did swap its inputs/ for the link')
    assert.equal(await readFile(join(precious, 'keep.txt'), 'utf8'), 'the provider\'s own file')
    recordAttack({ issue: '15.7', attack: 'a job swaps inputs/ for a symlink to a provider directory before its inputs are removed', got: 'only the link removed', limit: 'fs.rm does not follow links' })
  })

  it('a bronze job that holds its slot by sending nothing is displaced at once by a gold job (its own renter\'s too)', async () => {
    const p = provider(0)
    const bronze = await start(renter(0), p, { tier: 'bronze', declared: MiB })
    await waitFor(() => capacityOf(p).freeSlots() === 0, { what: 'the bronze job holding the slot' })
    assert.equal(capacityOf(p).preemptibleSlots(), 1)
    const began = Date.now()
    const gold = await runAttempt(makeAward(renter(0), p.peerId, { tier: 'gold' }), { runtime: { command: ['/bin/sh', '-c', 'echo gold > outputs/g.txt'], timeoutMs: 20_000 }, inputs: [] }, {
      libp2p: renter(0).libp2p, privateKey: renter(0).privateKey, peerId: renter(0).peerId, dir: join(tmp.path, 'gold'), idleMs: 10_000
    })
    assert.equal(gold.outcome, 'ok', gold.detail)
    assert.ok(Date.now() - began < 8_000, `gold waited ${Date.now() - began} ms for a slot held by a silent bronze job`)
    const r = await rejectedOf(bronze)
    assert.equal(r.code, JobFrame.Rejected.Code.NO_CAPACITY)
    assert.match(r.reason, /preempted by a gold job before it started/)
  })

  it('a renter that trickles 1-byte chunks loses its slot at the whole-transfer deadline (floor + declared bytes at the minimum rate)', async () => {
    const p = provider(3)
    // 4 MiB declared at P3's 1 MiB/s + its 1 s floor: 5 s from Start
    const began = Date.now()
    const s = await start(renter(0), p, { declared: 4 * MiB })
    await waitFor(() => capacityOf(p).freeSlots() === 0, { what: 'the trickling job holding the slot' })
    let sent = 0
    while (!s.settled()) {
      try { await s.ch.send({ inputChunk: { path: 'in.bin', offset: BigInt(sent), data: Uint8Array.of(1) } }) } catch { break }
      sent++
      // the attacker's pace: one byte every 200 ms keeps the stream far from its 10 s idle bound
      await sleep(200)
    }
    const r = await rejectedOf(s)
    const held = Date.now() - began
    assert.equal(r.code, JobFrame.Rejected.Code.OTHER)
    assert.match(r.reason, /inputs not received within 5000 ms of Start \(\d+ of 4194304 bytes arrived\)/)
    await waitFor(() => capacityOf(p).freeSlots() === 1, { what: 'the slot given back' })
    recordAttack({ issue: '13.5', attack: 'renter trickles 1-byte input chunks (200 ms apart) to keep its slot', got: `slot held ${held} ms, ${sent} bytes sent, then Rejected`, limit: 'input deadline from Start: 1 s + 4 MiB at 1 MiB/s (defaults 30 s + 256 KiB/s, ≤ 1 h)' })
  })

  it('tiny or empty input chunks are bounded: the chunk count is Rejected, an empty chunk is a protocol error', async () => {
    const p = provider(3)
    const tiny = await start(renter(0), p, { declared: MiB })
    let sent = 0
    for (; sent < 200 && !tiny.settled(); sent++) {
      try { await tiny.ch.send({ inputChunk: { path: 'in.bin', offset: BigInt(sent), data: Uint8Array.of(1) } }) } catch { break }
    }
    const r = await rejectedOf(tiny)
    assert.equal(r.code, JobFrame.Rejected.Code.OTHER)
    assert.match(r.reason, /more than 17 input chunks for 1 files of 1048576 bytes/)
    await waitFor(() => capacityOf(p).freeSlots() === 1, { what: 'the slot given back' })
    const empty = await start(renter(0), p, { declared: MiB })
    await empty.ch.send({ inputChunk: { path: 'in.bin', offset: 0n, data: new Uint8Array(0) } })
    await assert.rejects(empty.answer, (err: any) => err?.wireCode === 'PROTOCOL' && /empty input chunk/.test(err.message))
    recordAttack({ issue: '13.5', attack: '1-byte / 0-byte input chunks for 1 MiB declared', got: `Rejected "${r.reason}" (the renter had queued ${sent}) / PROTOCOL error at the first empty chunk`, limit: 'files + declared bytes / 64 KiB chunks; empty chunks refused' })
  })

  it('a gold job evicts no bronze job before its own inputs are in; once they are, it does', async () => {
    const p = provider(3)
    const bronze = await start(renter(0), p, { tier: 'bronze' })
    await sendInputs(bronze)
    const accepted = await bronze.answer
    assert.equal(accepted == null ? 'the end' : frameKind(accepted), 'accepted')
    type JobRow = ReturnType<ReturnType<typeof execOf>['jobList']>[number]
    const bronzeJob = (): JobRow | undefined => execOf(p).jobList().find(j => j.tier === 'bronze' && j.renter === renter(0).peerId.toString() && j.state !== 'rejected')
    await waitFor(() => bronzeJob()?.state === 'running', { what: 'the bronze job running' })
    // a gold renter sends its Start (1 MiB declared) and never a byte
    const before = new Set(execOf(p).jobList().map(j => j.attemptKey))
    const gold = await start(renter(1), p, { tier: 'gold', declared: MiB })
    const goldJob = (): JobRow | undefined => execOf(p).jobList().find(j => j.tier === 'gold' && !before.has(j.attemptKey))
    // admitted: receiving for its 2 s input bound, then rejected. A loaded machine may poll only after
    // the bound ran out; the Rejected below (inputs not received) says it was receiving until then
    await waitFor(() => goldJob() != null, { what: 'the gold job admitted' }).catch((err: Error) => {
      throw new Error(`${err.message}; the provider's jobs: ${JSON.stringify(execOf(p).jobList())}`, { cause: err })
    })
    assert.equal(bronzeJob()?.state, 'running', `the bronze job runs on while the gold job is ${goldJob()?.state ?? 'gone'}`)
    const r = await rejectedOf(gold)
    assert.equal(goldJob()?.state, 'rejected')
    assert.match(r.reason, /inputs not received within/)
    const evicted = bronzeJob()?.state !== 'running' ? 1 : 0
    assert.equal(bronzeJob()?.state, 'running', 'the bronze job was left running')
    recordAttack({ issue: '13.5', attack: 'gold Start that never sends its inputs, against a running bronze job', got: `${evicted} bronze job evicted; the gold job Rejected at its input deadline`, limit: 'displacement only after the gold job\'s InputEnd' })
    // an honest gold job with real inputs displaces it
    const payload = await copyJob(join(tmp.path, 'gold-in'))
    const ok = await runAttempt(makeAward(renter(1), p.peerId, { tier: 'gold' }), payload, { libp2p: renter(1).libp2p, privateKey: renter(1).privateKey, peerId: renter(1).peerId, dir: join(tmp.path, 'gold-out'), idleMs: 10_000 })
    assert.equal(ok.outcome, 'ok', ok.detail)
    assert.equal(bronzeJob()?.status, 'preempted')
  })
})

describe('exec: provider limits', function () {
  const gpus = [0, 1].map(index => ({ index, uuid: `GPU-${index}`, simulated: true }))
  const lease = (x: ReturnType<SlotScheduler['reserve']>): Lease => { if ('refused' in x) assert.fail(x.detail); return x }
  const rejects = (fn: () => void, code: JobFrame.Rejected.Code, re: RegExp): void => {
    assert.throws(fn, (err: unknown) => isStartDecline(err) && err.rejection === code && re.test(err.message))
  }

  it('the scheduler tells where a job would go and which GPUs a renter holds or waits for', () => {
    const s = new SlotScheduler({ gpus })
    assert.equal(s.placement({ tier: 'bronze' })?.[0]?.index, 0)
    lease(s.reserve({ key: 'A/1', tier: 'bronze' }))
    assert.equal(s.placement({ tier: 'silver' })?.[0]?.index, 1)
    lease(s.reserve({ key: 'B/1', tier: 'silver' }))
    assert.equal(s.placement({ tier: 'bronze' }), undefined, 'full for bronze')
    assert.equal(s.placement({ tier: 'gold' })?.[0]?.index, 0, 'gold would displace the bronze job')
    lease(s.reserve({ key: 'B/2', tier: 'gold' }))
    assert.deepEqual([...s.gpusHeldBy('A/')], [0])
    assert.deepEqual([...s.gpusHeldBy('B/')].sort(), [0, 1])
    assert.equal(s.placement({ tier: 'gold' }), undefined, 'nothing left to displace')
  })

  it('a notice after offPreempt waits for the next handler', () => {
    const s = new SlotScheduler({ gpus: gpus.slice(0, 1) })
    const bronze = lease(s.reserve({ key: 'A/1', tier: 'bronze' }))
    const early: string[] = []
    bronze.onPreempt(n => early.push(n.detail))
    bronze.offPreempt()
    lease(s.reserve({ key: 'B/1', tier: 'gold' }))
    assert.deepEqual(early, [])
    const late: string[] = []
    bronze.onPreempt(n => late.push(n.detail))
    assert.deepEqual(late, ['preempted by a gold job'])
  })

  it('a deferred displacement tells the bronze job to stop only at claim, and never once either side is gone', () => {
    const s = new SlotScheduler({ gpus: gpus.slice(0, 1) })
    const notices: string[] = []
    const bronze = lease(s.reserve({ key: 'A/1', tier: 'bronze' }))
    bronze.onPreempt(n => notices.push(n.detail))
    const gold = lease(s.reserve({ key: 'B/1', tier: 'gold' }, { deferDisplacement: true }))
    assert.deepEqual(notices, [], 'no notice while the gold job receives')
    assert.equal(s.slotsView()[0]?.waiting, 'B/1', 'the gold job holds its place')
    assert.equal(s.placement({ tier: 'gold' }), undefined, 'no second job can take the same bronze slot')
    gold.claim()
    gold.claim()
    assert.deepEqual(notices, ['preempted by a gold job'])
    // a gold job that gives up before its claim leaves the bronze job alone
    bronze.release()
    gold.release()
    const b2 = lease(s.reserve({ key: 'A/2', tier: 'bronze' }))
    const n2: string[] = []
    b2.onPreempt(n => n2.push(n.detail))
    const g2 = lease(s.reserve({ key: 'B/2', tier: 'gold' }, { deferDisplacement: true }))
    g2.release()
    g2.claim()
    assert.deepEqual(n2, [])
    // the bronze job ends by itself before the claim: the gold job gets the slot, the claim notifies nobody
    const g3 = lease(s.reserve({ key: 'B/3', tier: 'gold' }, { deferDisplacement: true }))
    b2.release()
    assert.equal(s.slotsView()[0]?.job?.key, 'B/3')
    g3.claim()
    assert.deepEqual(n2, [])
    assert.equal(s.slotsView()[0]?.job?.preempting, false)
  })

  it('the disk budget refuses a share that does not fit now (NO_CAPACITY) or ever (INPUT_TOO_LARGE), and takes shares back', () => {
    const d = new DiskBudget(100)
    rejects(() => { d.check(101) }, JobFrame.Rejected.Code.INPUT_TOO_LARGE, /needs 101 bytes of disk .* disk budget of 100/)
    d.check(60)
    d.hold({ key: 'a', renter: 'A', diskBytes: 60 })
    rejects(() => { d.check(41) }, JobFrame.Rejected.Code.NO_CAPACITY, /disk budget full: jobs in progress hold 60 of 100 bytes, this job needs 41/)
    d.check(40)
    // a share shrinks (a run's inputs removed), never grows, and only the job's own
    d.shrink('a', 10)
    assert.equal(d.used(), 10)
    d.shrink('a', 50)
    d.shrink('nobody', 0)
    assert.equal(d.used(), 10)
    d.check(90)
    d.release('a')
    d.release('a')
    assert.equal(d.used(), 0)
    d.check(100)
  })

  it('a renter may not hold more slots than its limit; displacing its own job takes none', () => {
    checkRenterSlots('A', new Set(), 0, 1)
    checkRenterSlots('A', new Set([0]), 0, 1)
    rejects(() => { checkRenterSlots('A', new Set([0]), 1, 1) }, JobFrame.Rejected.Code.NO_CAPACITY, /renter A already holds 1 of this provider's slots \(at most 1 per renter\)/)
  })
})
