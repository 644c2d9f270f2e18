import { strict as assert } from 'node:assert'
import { createHash, randomBytes } from 'node:crypto'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { PROTOCOL } from '../../protocols/ids.js'
import { InputCache, type InputCacheStats } from '../../src/cache/index.js'
import { toHex } from '../../src/common/index.js'
import { CONTROL_HANDLERS } from '../../src/control/index.js'
import { FrameChannel, frameKind } from '../../src/exec/shared/job-stream.js'
import { JobFrame } from '../../protocols/job.js'
import { recordAttack } from '../utils/redteam.js'
import { runAttempt, type AttemptResult, type AwardedJob, type JobEvent, type JobPayload } from '../../src/exec/renter/attempt.js'
import { ProcessRunner } from '../../src/exec/runners/index.js'
import { startInProcessNetwork, tempDir, type InProcessNetwork } from '../utils/index.js'
import { execOf, execProviderServices, makeAward } from './fixtures.js'
import type { IdlegridNode } from '../../src/node/index.js'

const hex = (data: Buffer): string => createHash('sha256').update(data).digest('hex')

/** What one attempt sent and found held, from its last `sending` event. */
function sendingOf (events: JobEvent[]): { sentBytes: number, cachedBytes: number } {
  const last = events.filter(e => e.type === 'sending').at(-1) as Extract<JobEvent, { type: 'sending' }> | undefined
  return { sentBytes: last?.sentBytes ?? 0, cachedBytes: last?.cachedBytes ?? 0 }
}

describe('exec: inputs a provider already holds are not sent again (job/1.1.0, issue 39)', function () {
  this.timeout(120_000)
  let tmp: { path: string, cleanup: () => Promise<void> }
  let net: InProcessNetwork
  let cache: InputCache
  const big = randomBytes(3 * 1024 * 1024)
  const small = Buffer.from('hello idlegrid\n')
  const open = randomBytes(1024 * 1024)
  const fresh = randomBytes(2 * 1024 * 1024)

  before(async () => {
    tmp = await tempDir('idlegrid-cached-inputs-')
    await chmod(tmp.path, 0o711)
    const workRoot = join(tmp.path, 'work')
    cache = new InputCache({ dir: join(workRoot, 'input-cache'), budgetBytes: 64 * 1024 * 1024 })
    net = await startInProcessNetwork({
      providers: 2,
      renters: 2,
      extensions: (role, i) => role === 'provider' && i === 0
        ? {
            services: execProviderServices({
              runner: new ProcessRunner(),
              gpus: [{ index: 0, uuid: 'GPU-sim-h100-cache', simulated: true, modelKey: 'h100-80gb' }],
              workRoot,
              graceMs: 3_000,
              keepaliveMs: 500,
              idleMs: 10_000,
              requireAccepted: false,
              inputCache: cache
            }, join(tmp.path, 'provider-0'))
          }
        : {}
    })
    for (const r of net.renters) for (const p of net.providers) await r.libp2p.dial(p.libp2p.getMultiaddrs()[0] as any)
    await mkdir(join(tmp.path, 'in'), { recursive: true })
    await writeFile(join(tmp.path, 'in', 'big.bin'), big)
    await writeFile(join(tmp.path, 'in', 'small.txt'), small)
    await writeFile(join(tmp.path, 'in', 'open.bin'), open)
  })
  after(async () => {
    await net?.stop()
    await tmp?.cleanup()
  })

  const provider = (): IdlegridNode => net.providers[0] as IdlegridNode
  const renter = (i: number): IdlegridNode => net.renters[i] as IdlegridNode
  /** A job that checks its inputs' digests and writes them out, so the outputs prove what it read. */
  const payload = (files: Array<{ name: string, public?: boolean }>): JobPayload => ({
    runtime: { command: ['/bin/sh', '-c', `cd inputs && sha256sum ${files.map(f => f.name).join(' ')} > ../outputs/sums.txt && echo done`], timeoutMs: 20_000 },
    inputs: files.map(f => ({ path: f.name, file: join(tmp.path, 'in', f.name), ...(f.public === true ? { public: true } : {}) }))
  })
  let runs = 0
  async function run (
    i: number,
    p: JobPayload
  ): Promise<{ result: AttemptResult, sent: { sentBytes: number, cachedBytes: number }, sums: string }> {
    const events: JobEvent[] = []
    const dir = join(tmp.path, `run-${runs++}`)
    const r = renter(i)
    const result = await runAttempt(makeAward(r, provider().peerId), p, {
      libp2p: r.libp2p,
      privateKey: r.privateKey,
      peerId: r.peerId,
      dir,
      idleMs: 10_000,
      onEvent: e => {
        events.push(e)
      }
    })
    assert.equal(result.outcome, 'ok', result.detail)
    assert.equal(result.verified, true)
    return { result, sent: sendingOf(events), sums: await readFile(join(dir, 'outputs', 'sums.txt'), 'utf8') }
  }

  it('the same renter\'s second job sends nothing the provider holds; the job reads the same bytes, attested the same', async () => {
    const job = payload([{ name: 'big.bin' }, { name: 'small.txt' }])
    const first = await run(0, job)
    assert.equal(first.sent.sentBytes, big.length + small.length)
    assert.equal(first.sent.cachedBytes, 0)
    const second = await run(0, job)
    assert.equal(second.sent.sentBytes, 0, 'every input was held')
    assert.equal(second.sent.cachedBytes, big.length + small.length)
    assert.equal(second.sums, first.sums)
    assert.match(second.sums, new RegExp(hex(big)))
    assert.deepEqual(second.result.attestation?.message.inputDigest, first.result.attestation?.message.inputDigest, 'the input digest does not depend on the cache')
    assert.ok(cache.stats().hits >= 2)
  })

  it('red team: a renter that names another renter\'s private input by its digest, without its bytes, gets nothing', async () => {
    // renter 0's big.bin is in the cache (the test above); renter 1 claims it in a Start and sends no bytes
    const r = renter(1)
    const awarded = makeAward(r, provider().peerId)
    const stream = await r.libp2p.dialProtocol(provider().peerId, PROTOCOL.jobCached)
    const ch = new FrameChannel(stream, { idleMs: 10_000 })
    await ch.send({
      start: {
        award: awarded.award,
        jobRequest: awarded.jobRequest,
        runtime: { image: '', command: ['/bin/sh', '-c', 'cat inputs/stolen.bin > outputs/stolen.bin'], env: [], timeoutMs: 20_000n, shmSizeMib: 0 },
        inputs: [{ path: 'stolen.bin', size: BigInt(big.length), sha256: createHash('sha256').update(big).digest() }]
      }
    })
    const held = await ch.next()
    assert.equal(held != null && frameKind(held), 'held')
    assert.deepEqual(held?.held?.sha256, [], 'nothing held for renter 1')
    await ch.send({ inputEnd: {} })
    const answer = await ch.next()
    assert.equal(answer != null && frameKind(answer), 'rejected')
    assert.equal(answer?.rejected?.code, JobFrame.Rejected.Code.INPUT_MISMATCH)
    ch.abort()
    recordAttack({
      issue: '39.6',
      attack: 'a renter names another renter\'s private cached input by digest (Start manifest, job/1.1.0) and sends no bytes',
      got: `Held: ${held?.held?.sha256.length ?? -1} files; then Rejected ${JobFrame.Rejected.Code[answer?.rejected?.code ?? 0] ?? ''}: no byte of the other renter's file`,
      limit: 'a cache entry serves only the keys that sent its bytes (or any, once marked public); a missing file fails its digest'
    })
  })

  it('another renter naming the same private files gets nothing from the cache: it sends them all (red team)', async () => {
    const other = await run(1, payload([{ name: 'big.bin' }, { name: 'small.txt' }]))
    assert.equal(other.sent.cachedBytes, 0)
    assert.equal(other.sent.sentBytes, big.length + small.length)
    // and the bid side: renter 1 is told 0 bytes held
    const held = cache.held(toHex(renter(1).peerId.toMultihash().bytes), [createHash('sha256').update(big).digest()])
    assert.deepEqual(held, { count: 1, bytes: big.length }, 'renter 1 sent the bytes itself: now they are its too')
    recordAttack({
      issue: '39.6',
      attack: 'a second renter runs a job with the same private inputs as another renter, hoping the provider skips the transfer (proof it holds them, or a free ride)',
      got: `Held 0 bytes of ${big.length + small.length}: all sent (${other.sent.sentBytes} bytes)`,
      limit: 'input cache entries are reused only for the renters who sent their bytes'
    })
  })

  it('a file one renter marks public serves another renter that names it', async () => {
    const shared = await run(1, payload([{ name: 'open.bin', public: true }]))
    assert.equal(shared.sent.sentBytes, open.length)
    const reuse = await run(0, payload([{ name: 'open.bin' }]))
    assert.equal(reuse.sent.sentBytes, 0)
    assert.equal(reuse.sent.cachedBytes, open.length)
  })

  it('a cache entry whose bytes no longer match its digest is dropped and sent again; the job still reads the right bytes', async () => {
    const entry = join(tmp.path, 'work', 'input-cache', hex(big))
    await chmod(entry, 0o644)
    const bad = Buffer.from(big)
    bad[12345] = bad[12345] as number ^ 0xff
    await writeFile(entry, bad)
    const before = cache.stats().dropped
    const again = await run(0, payload([{ name: 'big.bin' }, { name: 'small.txt' }]))
    assert.equal(cache.stats().dropped, before + 1)
    assert.equal(again.sent.sentBytes, big.length, 'the damaged file is sent again, the other one is not')
    assert.equal(again.sent.cachedBytes, small.length)
    assert.match(again.sums, new RegExp(hex(big)))
  })

  it('a provider whose Held names a file that is not an input: the renter ends the attempt (PROTOCOL)', async () => {
    const liar = net.providers[1] as IdlegridNode
    await liar.libp2p.handle(PROTOCOL.jobCached, ({ stream }) => {
      const ch = new FrameChannel(stream, { idleMs: 5_000 })
      void (async () => {
        const start = await ch.next()
        if (start == null || frameKind(start) !== 'start') return
        await ch.send({ held: { sha256: [randomBytes(32)] } })
        await ch.next().catch(() => {})
      })().catch(() => {})
    })
    const r = renter(0)
    const result = await runAttempt(makeAward(r, liar.peerId), payload([{ name: 'small.txt' }]), { libp2p: r.libp2p, privateKey: r.privateKey, peerId: r.peerId, dir: join(tmp.path, 'liar'), idleMs: 5_000 })
    assert.equal(result.outcome, 'lost')
    assert.match(result.detail ?? '', /PROTOCOL: Held names [0-9a-f]{64}, which is none of the job's inputs/)
    await liar.libp2p.unhandle(PROTOCOL.jobCached)
  })

  it('the provider reports its cache (exec.jobs)', async () => {
    const jobs = await execOf(provider())[CONTROL_HANDLERS]()['exec.jobs']?.() as { inputCache?: InputCacheStats }
    assert.equal(jobs.inputCache?.entries, 3)
    assert.equal(jobs.inputCache?.usedBytes, big.length + small.length + open.length)
    assert.equal(jobs.inputCache?.dropped, 1)
  })

  /** An award of a job naming `files` as its datasets (digests and bytes), with the winning bid's cache claim. */
  const claimed = (
    i: number,
    files: Buffer[],
    claim: { cachedBytes: number, cachedDatasets: number },
    winner = provider()
  ): AwardedJob => ({
    ...makeAward(renter(i), winner.peerId, {
      datasets: {
        digests: files.map(f => createHash('sha256').update(f).digest()),
        bytes: BigInt(files.reduce((n, f) => n + f.length, 0))
      }
    }),
    cacheClaim: { cachedBytes: BigInt(claim.cachedBytes), cachedDatasets: claim.cachedDatasets }
  })
  const overclaims = (events: JobEvent[]): JobEvent[] => events.filter(e => e.type === 'cache-overclaim')

  it('the winner\'s cache claim is checked against its Held frame: a true claim passes, a false one is a cache-overclaim and the job goes on', async () => {
    const r = renter(0)
    const opts = (dir: string, events: JobEvent[]): Parameters<typeof runAttempt>[2] => ({
      libp2p: r.libp2p,
      privateKey: r.privateKey,
      peerId: r.peerId,
      dir: join(tmp.path, dir),
      idleMs: 10_000,
      onEvent: e => { events.push(e) }
    })
    const honest: JobEvent[] = []
    const held = await runAttempt(claimed(0, [big], { cachedBytes: big.length, cachedDatasets: 1 }), payload([{ name: 'big.bin' }, { name: 'small.txt' }]), opts('claim-true', honest))
    assert.equal(held.outcome, 'ok', held.detail)
    assert.equal(sendingOf(honest).cachedBytes, big.length + small.length)
    assert.deepEqual(overclaims(honest), [])

    await writeFile(join(tmp.path, 'in', 'fresh.bin'), fresh)
    const lied: JobEvent[] = []
    const caught = await runAttempt(claimed(0, [fresh], { cachedBytes: fresh.length, cachedDatasets: 1 }), payload([{ name: 'fresh.bin' }]), opts('claim-false', lied))
    assert.equal(caught.outcome, 'ok', caught.detail)
    assert.deepEqual(overclaims(lied), [{ type: 'cache-overclaim', attempt: 1, provider: provider().peerId.toString(), claimedBytes: fresh.length, heldBytes: 0, claimedDatasets: 1, heldDatasets: 0 }])
    assert.equal(sendingOf(lied).sentBytes, fresh.length, 'the inputs were sent')
  })

  it('red team: a winner that claimed cached inputs and speaks only job/1.0.0 (no Held) holds nothing: a cache-overclaim', async () => {
    const old = net.providers[1] as IdlegridNode
    await old.libp2p.handle(PROTOCOL.job, ({ stream }) => {
      const ch = new FrameChannel(stream, { idleMs: 5_000 })
      void ch.next().then(() => { ch.abort() }, () => {})
    })
    const r = renter(0)
    const events: JobEvent[] = []
    const result = await runAttempt(claimed(0, [big], { cachedBytes: big.length, cachedDatasets: 1 }, old), payload([{ name: 'big.bin' }]), {
      libp2p: r.libp2p, privateKey: r.privateKey, peerId: r.peerId, dir: join(tmp.path, 'old-protocol'), idleMs: 5_000, onEvent: e => { events.push(e) }
    })
    await old.libp2p.unhandle(PROTOCOL.job)
    assert.notEqual(result.outcome, 'ok')
    assert.deepEqual(overclaims(events).map(e => e.type === 'cache-overclaim' && [e.claimedBytes, e.heldBytes]), [[big.length, 0]])
  })
})
