import { strict as assert } from 'node:assert'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { PROTOCOL } from '../../protocols/ids.js'
import { JobStatus, Receipt } from '../../protocols/job.js'
import { toHex } from '../../src/common/index.js'
import { isStreamError } from '../../src/exec/errors.js'
import { FrameChannel } from '../../src/exec/shared/job-stream.js'
import { runAttempt, type AttemptResult, type JobPayload } from '../../src/exec/renter/attempt.js'
import { sha256 } from '../../src/identity/index.js'
import { openAward } from '../../src/market/shared/award-check.js'
import { fileSetDigest } from '../../src/exec/shared/digest.js'
import { waitFor, type InProcessNetwork } from '../utils/index.js'
import { attestationsInLedger, execOf, makeAward, misbehavingProvider, renterAnswers, type Misbehaviour, useJobNetwork } from './fixtures.js'
import type { Ed25519PrivateKey } from '@libp2p/interface'

describe('exec: job stream between in-process nodes', function () {
  this.timeout(120_000)
  const suite = useJobNetwork('idlegrid-exec-stream-')
  const { renter, attemptOpts } = suite

  it('runs a job with real inputs; outputs, attestation and receipt verify', async () => {
    const provider = suite.net.providers[1]
    assert.ok(provider != null)
    const awarded = makeAward(renter(), provider.peerId)
    const lines: string[] = []
    const result = await runAttempt(awarded, suite.payload, { ...attemptOpts('ok'), onEvent: e => { if (e.type === 'log') lines.push(e.line) } })
    assert.equal(result.outcome, 'ok', result.detail)
    assert.equal(result.verified, true)
    assert.deepEqual(lines, ['done'])
    assert.equal(await readFile(join(suite.dir, 'ok', 'outputs', 'upper.txt'), 'utf8'), 'HELLO IDLEGRID\n')
    assert.equal(Buffer.compare(sha256(await readFile(join(suite.dir, 'ok', 'outputs', 'b.bin'))), sha256(Buffer.alloc(1_500_000, 42))), 0)
    const a = result.attestation?.message
    assert.equal(a?.status, JobStatus.COMPLETED)
    assert.equal(a?.exitCode, 0)
    assert.equal(a?.telemetry?.simulated, true)
    assert.equal(Buffer.compare(a?.gpu?.uuidHash ?? new Uint8Array(), sha256('GPU-sim-h100-1')), 0)
    assert.equal(Buffer.compare(a?.outputDigest ?? new Uint8Array(), result.receivedDigest), 0)
    assert.equal(result.receipt?.message.outcome, Receipt.Outcome.OK)
    // an OK receipt carries the digest received too (equal to the attestation's), and its latency
    // runs from Accepted to the attestation as the renter saw them
    assert.equal(
      Buffer.compare(
        result.receipt?.message.receivedOutputDigest ?? new Uint8Array(),
        a?.outputDigest ?? new Uint8Array(1)
      ),
      0
    )
    const latency = Number(result.receipt?.message.latencyMs)
    assert.ok(result.acceptedAt != null && latency >= 0 && latency <= Date.now() - result.acceptedAt, `latency_ms ${latency}`)
    // the provider acknowledged the receipt it verified
    assert.deepEqual(result.receiptAck, { state: 'acknowledged' })
    // the provider recorded the same attestation in its ledger, and verified the renter's receipt for it
    const jobId = toHex(a?.jobId as Uint8Array)
    const recorded = await waitFor(async () => (await attestationsInLedger(provider, jobId))[0], { what: 'the attestation in the provider\'s ledger' })
    assert.equal(recorded.outputDigest, toHex(result.receivedDigest))
    assert.equal(recorded.status, JobStatus.COMPLETED)
    await waitFor(() => execOf(provider).jobList().some(j => j.jobId === jobId && j.state === 'done' && j.receipt === 'OK'), { what: 'the receipt verified on the provider' })
  })

  it('returns an empty output file: it arrives and the outputs verify', async () => {
    const provider = suite.net.providers[1]
    assert.ok(provider != null)
    const awarded = makeAward(renter(), provider.peerId)
    const payload: JobPayload = { runtime: { command: ['/bin/sh', '-c', ': > outputs/empty.txt; echo x > outputs/full.txt'], timeoutMs: 10_000 }, inputs: [] }
    const result = await runAttempt(awarded, payload, attemptOpts('empty-output'))
    assert.equal(result.outcome, 'ok', result.detail)
    assert.equal(result.verified, true)
    assert.equal(await readFile(join(suite.dir, 'empty-output', 'outputs', 'empty.txt'), 'utf8'), '')
  })

  it('refuses an award it did not accept, then runs it once accepted', async () => {
    const provider = suite.net.providers[0]
    assert.ok(provider != null)
    const awarded = makeAward(renter(), provider.peerId)
    const refused = await runAttempt(awarded, suite.payload, attemptOpts('not-accepted'))
    assert.equal(refused.outcome, 'rejected')
    assert.match(refused.detail ?? '', /NOT_AWARDED.*did not accept/)
    execOf(suite.net.providers[0] as InProcessNetwork['providers'][number]).noteAccepted(awarded.award)
    const ok = await runAttempt(awarded, suite.payload, attemptOpts('accepted'))
    assert.equal(ok.outcome, 'ok', ok.detail)
    // the same award attempt is not run twice
    const again = await runAttempt(awarded, suite.payload, attemptOpts('again'))
    assert.equal(again.outcome, 'rejected')
    assert.match(again.detail ?? '', /already/, again.detail)
  })

  it('a provider that refuses the Start frame while 40 MiB of inputs are still going: the renter hears it at once and stops sending', async function () {
    // a renter that keeps sending hangs (it did, forever): the test's time bound is the check
    this.timeout(30_000)
    const provider = suite.net.providers[0]
    assert.ok(provider != null)
    // the provider refuses before it reads any input, then reads no more: inputs past the yamux
    // window would wait forever for room that never comes
    const big = join(suite.dir, 'big-input.bin')
    await writeFile(big, Buffer.alloc(40 * 1024 * 1024, 7))
    const payload: JobPayload = { ...suite.payload, inputs: [...suite.payload.inputs, { path: 'big.bin', file: big }] }
    const refused = await runAttempt(makeAward(renter(), provider.peerId), payload, attemptOpts('refused-mid-send'))
    assert.equal(refused.outcome, 'rejected', refused.detail)
    assert.match(refused.detail ?? '', /NOT_AWARDED/)
  })

  it('refuses an award for another renter\'s job, and one naming another winner', async () => {
    const provider = suite.net.providers[1]
    assert.ok(provider != null)
    // renter 1 replays renter 0's award
    const stolen = makeAward(renter(0), provider.peerId)
    const r1 = await runAttempt(stolen, suite.payload, attemptOpts('stolen', 1))
    assert.equal(r1.outcome, 'rejected')
    assert.match(r1.detail ?? '', /NOT_AWARDED/)
    // an award signed by a key that is not the job request's renter
    const key = await generateKeyPair('Ed25519') as Ed25519PrivateKey
    const forged = makeAward(renter(0), provider.peerId)
    const other = makeAward({ privateKey: key, peerId: peerIdFromPrivateKey(key) }, provider.peerId)
    const r2 = await runAttempt({ award: other.award, jobRequest: forged.jobRequest }, suite.payload, attemptOpts('mixed'))
    assert.equal(r2.outcome, 'rejected')
    assert.match(r2.detail ?? '', /BAD_AWARD/)
    const elsewhere = makeAward(renter(0), (suite.net.providers[0] as InProcessNetwork['providers'][number]).peerId)
    const r3 = await runAttempt({ award: elsewhere.award, jobRequest: elsewhere.jobRequest }, suite.payload, { ...attemptOpts('elsewhere'), libp2p: { dialProtocol: async (_p, proto, o) => await renter().libp2p.dialProtocol(provider.peerId, proto, o) } })
    assert.equal(r3.outcome, 'rejected')
    assert.match(r3.detail ?? '', /another provider/)
  })

  it('another renter\'s job with the same id, nonce and attempt does not use up this renter\'s attempt (issue 13)', async () => {
    const provider = suite.net.providers[1]
    assert.ok(provider != null)
    const mine = makeAward(renter(0), provider.peerId)
    const { jobId, jobNonce } = openAward(mine.award).message
    // renter 1 copies the id and nonce of renter 0's job into one of its own, and runs it first
    const copy = makeAward(renter(1), provider.peerId, { jobId, nonce: jobNonce })
    const first = await runAttempt(copy, suite.payload, attemptOpts('copy', 1))
    assert.equal(first.outcome, 'ok', first.detail)
    const ok = await runAttempt(mine, suite.payload, attemptOpts('mine'))
    assert.equal(ok.outcome, 'ok', ok.detail)
  })

  it('ends the stream with FRAME_TOO_LARGE on an oversized frame and keeps serving', async () => {
    const provider = suite.net.providers[1]
    assert.ok(provider != null)
    const stream = await renter().libp2p.dialProtocol(provider.peerId, PROTOCOL.job)
    const ch = new FrameChannel(stream, { idleMs: 10_000 })
    await ch.sendRaw(new Uint8Array(2 * 1024 * 1024))
    await assert.rejects(ch.next(), (err: unknown) => isStreamError(err) && err.wireCode === 'FRAME_TOO_LARGE' && err.remote)
    ch.abort()
    const ok = await runAttempt(makeAward(renter(), provider.peerId), suite.payload, attemptOpts('after-oversize'))
    assert.equal(ok.outcome, 'ok', ok.detail)
  })

  it('kills a job at its time limit: attestation and receipt say timeout, partial outputs come back', async () => {
    const provider = suite.net.providers[1]
    assert.ok(provider != null)
    const job: JobPayload = { runtime: { command: ['/bin/sh', '-c', 'echo partial > outputs/p.txt; sleep 30'], timeoutMs: 1_000 }, inputs: [] }
    const result = await runAttempt(makeAward(renter(), provider.peerId), job, attemptOpts('timeout'))
    assert.equal(result.outcome, 'timeout', result.detail)
    assert.equal(result.verified, true)
    assert.equal(result.attestation?.message.status, JobStatus.TIMEOUT)
    assert.equal(result.receipt?.message.outcome, Receipt.Outcome.TIMEOUT)
    assert.equal(await readFile(join(suite.dir, 'timeout', 'outputs', 'p.txt'), 'utf8'), 'partial\n')
  })

  /**
   * A job with a 40 MiB input sent to provider 2 misbehaving as `mode` (more than a yamux window: a
   * renter that keeps sending waits on it).
   */
  async function bigInputTo (mode: Misbehaviour, dir: string, idleMs?: number): Promise<AttemptResult> {
    const bad = suite.net.providers[2]
    assert.ok(bad != null)
    await bad.libp2p.unhandle(PROTOCOL.job)
    await misbehavingProvider(bad, mode)
    const big = join(suite.dir, `big-input-${dir}.bin`)
    await writeFile(big, Buffer.alloc(40 * 1024 * 1024, 9))
    const payload: JobPayload = { ...suite.payload, inputs: [...suite.payload.inputs, { path: 'big.bin', file: big }] }
    return await runAttempt(makeAward(renter(), bad.peerId), payload, {
      ...attemptOpts(dir),
      ...(idleMs != null ? { idleMs } : {})
    })
  }

  it('a provider that says Accepted before the inputs are all sent, then reads nothing: the attempt is lost at once, not stuck sending', async function () {
    // a renter that believes the early Accepted waits forever on its inputs: the test's time bound is the check
    this.timeout(30_000)
    const result = await bigInputTo('accept-at-start', 'accepted-early')
    assert.equal(result.outcome, 'lost', result.detail)
    assert.match(result.detail ?? '', /PROTOCOL: Accepted before the inputs were all sent/)
  })

  it('a provider that stops reading the inputs and says nothing: the attempt ends after the idle bound, not stuck sending', async function () {
    // a renter with no bound on sending waits forever on the muxer window: the test's time bound is the check
    this.timeout(30_000)
    const started = Date.now()
    const result = await bigInputTo('stall-inputs', 'stalled-inputs', 2_000)
    assert.equal(result.outcome, 'lost', result.detail)
    assert.match(result.detail ?? '', /IDLE_TIMEOUT: the provider took no input for 2000 ms/)
    assert.ok(Date.now() - started < 15_000, 'ended within a few idle bounds')
  })

  it('a provider with an oversized frame, a forged attestation, mismatched outputs or that vanishes: the attempt says which', async () => {
    const bad = suite.net.providers[2]
    assert.ok(bad != null)
    const forger = await generateKeyPair('Ed25519') as Ed25519PrivateKey
    const expected = { 'oversized-frame': 'lost', 'forged-attestation': 'bad_attestation', 'bad-output': 'bad_output', 'vanish-after-accept': 'lost' } as const
    for (const mode of ['oversized-frame', 'forged-attestation', 'bad-output', 'vanish-after-accept'] as const) {
      await bad.libp2p.unhandle(PROTOCOL.job)
      await misbehavingProvider(bad, mode, { privateKey: forger, peerId: peerIdFromPrivateKey(forger) })
      const result = await runAttempt(makeAward(renter(), bad.peerId), suite.payload, { ...attemptOpts(`bad-${mode}`), idleMs: 5_000 })
      assert.equal(result.outcome, expected[mode], `${mode}: ${result.detail ?? ''}`)
      assert.equal(result.verified, false, mode)
      if (mode === 'oversized-frame') assert.match(result.detail ?? '', /FRAME_TOO_LARGE/)
      if (mode === 'forged-attestation') {
        assert.match(result.detail ?? '', /attestation does not verify/)
        assert.equal(result.receipt, undefined)
        // signed by another key: a signature failure, told to the provider as such
        await waitFor(() => renterAnswers.get(mode) === 'BAD_SIGNATURE', { what: `BAD_SIGNATURE told to the provider (heard ${renterAnswers.get(mode) ?? 'nothing'})` })
      }
      if (mode === 'bad-output') {
        // the renter signed a BAD_OUTPUT receipt with the digest it actually received
        assert.equal(result.receipt?.message.outcome, Receipt.Outcome.BAD_OUTPUT)
        assert.deepEqual(result.receipt?.message.receivedOutputDigest, fileSetDigest([{ path: 'out.txt', size: 12n, sha256: sha256('real output\n') }]))
      }
    }
  })

  it('gold preempts a running bronze job: the bronze attempt ends preempted with its checkpoint, attested preemptible', async () => {
    const busy = suite.net.providers[1]
    assert.ok(busy != null)
    const script = 'trap "echo step-1 > outputs/ckpt.txt; exit 0" TERM; echo working; while true; do sleep 0.1; done'
    const lines: string[] = []
    const bronze = runAttempt(makeAward(renter(), busy.peerId, { tier: 'bronze' }), { runtime: { command: ['/bin/sh', '-c', script], timeoutMs: 60_000 }, inputs: [] }, {
      ...attemptOpts('bronze'),
      onEvent: e => { if (e.type === 'log') lines.push(e.line) }
    })
    await waitFor(() => lines.includes('working'), { what: 'bronze job running' })
    const gold = await runAttempt(makeAward(renter(1), busy.peerId, { tier: 'gold' }), { runtime: { command: ['/bin/sh', '-c', 'echo gold > outputs/g.txt'], timeoutMs: 20_000 }, inputs: [] }, attemptOpts('gold', 1))
    assert.equal(gold.outcome, 'ok', gold.detail)
    const preempted = await bronze
    assert.equal(preempted.outcome, 'preempted', preempted.detail)
    assert.equal(preempted.verified, true)
    assert.equal((await readFile(join(preempted.dir, 'outputs', 'ckpt.txt'), 'utf8')).trim(), 'step-1')
    assert.equal(preempted.attestation?.message.preemptible, true)
    const jobId = toHex(preempted.attestation?.message.jobId as Uint8Array)
    const recorded = await waitFor(async () => (await attestationsInLedger(busy, jobId))[0], { what: 'the preempted attestation in the provider\'s ledger' })
    assert.equal(recorded.status, JobStatus.PREEMPTED)
    assert.equal(recorded.preemptible, true)
  })
})
