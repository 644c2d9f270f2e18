import { strict as assert } from 'node:assert'
import { readFile, writeFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { PROTOCOL } from '../protocols/ids.js'
import { JobStatus, Receipt } from '../protocols/job.js'
import {
  FrameChannel, JobStreamError, ProcessRunner, jobExecService, runAttempt, openReceipt, fileSetDigest,
  type AttestationEvent, type ExecServiceInit, type JobExecService, type JobPayload, type ReceiptEvent
} from '../src/exec/index.js'
import { runJob } from '../src/submit/index.js'
import { sha256 } from '../src/identity/index.js'
import { startInProcessNetwork, tempDir, waitFor, type InProcessNetwork } from './utils/index.js'
import { listAwards, makeAward, misbehavingProvider } from './exec-fixtures.js'
import type { Ed25519PrivateKey } from '@libp2p/interface'

const exec = (n: InProcessNetwork, i: number): JobExecService => (n.providers[i]?.libp2p.services as any).exec as JobExecService

describe('exec: job stream between in-process nodes', function () {
  this.timeout(120_000)
  let net: InProcessNetwork
  let tmp: { path: string, cleanup: () => Promise<void> }
  let payload: JobPayload
  const attestations: AttestationEvent[] = []
  const receipts: ReceiptEvent[] = []

  before(async () => {
    tmp = await tempDir('idlegrid-exec-stream-')
    const init = (i: number): ExecServiceInit => ({
      runner: new ProcessRunner(),
      gpus: [{ index: 0, uuid: `GPU-sim-h100-${i}`, simulated: true, modelKey: 'h100-80gb' }],
      workRoot: join(tmp.path, `work-${i}`),
      graceMs: 3_000,
      keepaliveMs: 500,
      idleMs: 10_000,
      requireAccepted: i !== 1
    })
    // provider 0: accepted awards only; 1: any award (the market is not in these tests); 2: misbehaves
    net = await startInProcessNetwork({
      providers: 3,
      renters: 2,
      extensions: (role, i) => role === 'provider' && i < 2 ? { services: { exec: jobExecService(init(i)) } } : {}
    })
    // the market's accept stream connects renter and winner before a job stream; here we dial directly
    for (const r of net.renters) for (const p of net.providers) await r.libp2p.dial(p.libp2p.getMultiaddrs()[0] as any)
    for (const i of [0, 1]) {
      exec(net, i).onAttestation(e => attestations.push(e))
      exec(net, i).onReceipt(e => receipts.push(e))
    }
    await mkdir(join(tmp.path, 'in', 'data'), { recursive: true })
    await writeFile(join(tmp.path, 'in', 'a.txt'), 'hello idlegrid\n')
    await writeFile(join(tmp.path, 'in', 'data', 'b.bin'), Buffer.alloc(1_500_000, 42))
    payload = {
      runtime: { command: ['/bin/sh', '-c', 'tr a-z A-Z < inputs/a.txt > outputs/upper.txt && cp inputs/data/b.bin outputs/b.bin && echo done'], timeoutMs: 20_000 },
      inputs: [{ path: 'a.txt', file: join(tmp.path, 'in', 'a.txt') }, { path: 'data/b.bin', file: join(tmp.path, 'in', 'data', 'b.bin') }]
    }
  })

  after(async () => {
    await net?.stop()
    await tmp?.cleanup()
  })

  const renter = (i = 0): InProcessNetwork['renters'][number] => net.renters[i] as InProcessNetwork['renters'][number]
  const attemptOpts = (dir: string, i = 0): Parameters<typeof runAttempt>[2] => ({ libp2p: renter(i).libp2p, privateKey: renter(i).privateKey, peerId: renter(i).peerId, dir: join(tmp.path, dir), idleMs: 10_000 })

  it('runs a job with real inputs; outputs, attestation and receipt verify', async () => {
    const provider = net.providers[1]
    assert.ok(provider != null)
    const awarded = makeAward(renter(), provider.peerId)
    const lines: string[] = []
    const result = await runAttempt(awarded, payload, { ...attemptOpts('ok'), onEvent: e => { if (e.type === 'log') lines.push(e.line) } })
    assert.equal(result.outcome, 'ok', result.detail)
    assert.equal(result.verified, true)
    assert.deepEqual(lines, ['done'])
    assert.equal(await readFile(join(tmp.path, 'ok', 'outputs', 'upper.txt'), 'utf8'), 'HELLO IDLEGRID\n')
    assert.equal(Buffer.compare(sha256(await readFile(join(tmp.path, 'ok', 'outputs', 'b.bin'))), sha256(Buffer.alloc(1_500_000, 42))), 0)
    const a = result.attestation?.value
    assert.equal(a?.status, JobStatus.COMPLETED)
    assert.equal(a?.exitCode, 0)
    assert.equal(a?.telemetry?.simulated, true)
    assert.equal(Buffer.compare(a?.gpu?.uuidHash ?? new Uint8Array(), sha256('GPU-sim-h100-1')), 0)
    assert.equal(Buffer.compare(a?.outputDigest ?? new Uint8Array(), result.receivedDigest), 0)
    assert.equal(result.receipt?.value.outcome, Receipt.Outcome.OK)
    // the provider got the same attestation and the renter's receipt, as envelope bytes for the ledger
    await waitFor(() => receipts.some(r => Buffer.compare(r.attestation.envelope, result.attestation?.envelope ?? new Uint8Array()) === 0), { what: 'receipt on the provider' })
    const got = receipts.find(r => Buffer.compare(r.attestation.envelope, result.attestation?.envelope ?? new Uint8Array()) === 0)
    assert.equal(Buffer.compare(got?.receipt.envelope ?? new Uint8Array(), result.receipt?.envelope ?? new Uint8Array([1])), 0)
    openReceipt(got?.receipt.envelope as Uint8Array, { renter: renter().peerId, provider: provider.peerId, jobId: a?.jobId as Uint8Array, attestationHash: result.attestation?.hash as Uint8Array })
    assert.ok(attestations.length >= 1)
  })

  it('refuses an award it did not accept, then runs it once accepted', async () => {
    const provider = net.providers[0]
    assert.ok(provider != null)
    const awarded = makeAward(renter(), provider.peerId)
    const refused = await runAttempt(awarded, payload, attemptOpts('not-accepted'))
    assert.equal(refused.outcome, 'rejected')
    assert.match(refused.detail ?? '', /NOT_AWARDED.*did not accept/)
    exec(net, 0).noteAccepted(awarded.award)
    const ok = await runAttempt(awarded, payload, attemptOpts('accepted'))
    assert.equal(ok.outcome, 'ok', ok.detail)
    // the same award attempt is not run twice
    const again = await runAttempt(awarded, payload, attemptOpts('again'))
    assert.equal(again.outcome, 'rejected')
  })

  it('refuses an award for another renter\'s job, and one naming another winner', async () => {
    const provider = net.providers[1]
    assert.ok(provider != null)
    // renter 1 replays renter 0's award
    const stolen = makeAward(renter(0), provider.peerId)
    const r1 = await runAttempt(stolen, payload, attemptOpts('stolen', 1))
    assert.equal(r1.outcome, 'rejected')
    assert.match(r1.detail ?? '', /NOT_AWARDED/)
    // an award signed by a key that is not the job request's renter
    const key = await generateKeyPair('Ed25519') as Ed25519PrivateKey
    const forged = makeAward(renter(0), provider.peerId)
    const other = makeAward({ privateKey: key, peerId: peerIdFromPrivateKey(key) }, provider.peerId)
    const r2 = await runAttempt({ award: other.award, jobRequest: forged.jobRequest }, payload, attemptOpts('mixed'))
    assert.equal(r2.outcome, 'rejected')
    assert.match(r2.detail ?? '', /BAD_AWARD/)
    const elsewhere = makeAward(renter(0), (net.providers[0] as InProcessNetwork['providers'][number]).peerId)
    const r3 = await runAttempt({ award: elsewhere.award, jobRequest: elsewhere.jobRequest }, payload, { ...attemptOpts('elsewhere'), libp2p: { dialProtocol: async (_p, proto, o) => await renter().libp2p.dialProtocol(provider.peerId, proto, o) } })
    assert.equal(r3.outcome, 'rejected')
    assert.match(r3.detail ?? '', /another provider/)
  })

  it('ends the stream with FRAME_TOO_LARGE on an oversized frame and keeps serving', async () => {
    const provider = net.providers[1]
    assert.ok(provider != null)
    const stream = await renter().libp2p.dialProtocol(provider.peerId, PROTOCOL.job)
    const ch = new FrameChannel(stream, { idleMs: 10_000 })
    await ch.sendRaw(new Uint8Array(2 * 1024 * 1024))
    await assert.rejects(ch.next(), (err: unknown) => err instanceof JobStreamError && err.code === 'FRAME_TOO_LARGE' && err.remote)
    ch.abort()
    const ok = await runAttempt(makeAward(renter(), provider.peerId), payload, attemptOpts('after-oversize'))
    assert.equal(ok.outcome, 'ok', ok.detail)
  })

  it('kills a job at its time limit: attestation and receipt say timeout, and it is not retried', async () => {
    const provider = net.providers[1]
    assert.ok(provider != null)
    const awards = listAwards(renter(), [provider.peerId, (net.providers[0] as InProcessNetwork['providers'][number]).peerId])
    const summary = await runJob({
      libp2p: renter().libp2p,
      privateKey: renter().privateKey,
      peerId: renter().peerId,
      awards,
      jobId: Buffer.from(awards.jobId).toString('hex'),
      baseDir: join(tmp.path, 'out'),
      idleMs: 10_000,
      payload: { runtime: { command: ['/bin/sh', '-c', 'echo partial > outputs/p.txt; sleep 30'], timeoutMs: 1_000 }, inputs: [] }
    })
    assert.equal(summary.status, 'timeout')
    assert.equal(summary.attempts, 1)
    assert.equal(summary.attestation?.status, 'TIMEOUT')
    assert.equal(summary.receipt?.outcome, 'TIMEOUT')
    assert.equal(await readFile(join(summary.outputDir, 'outputs', 'p.txt'), 'utf8'), 'partial\n')
  })

  it('a provider with an oversized frame, a forged attestation or mismatched outputs does not lose the job', async () => {
    const bad = net.providers[2]
    const good = net.providers[1]
    assert.ok(bad != null && good != null)
    const forger = await generateKeyPair('Ed25519') as Ed25519PrivateKey
    for (const mode of ['oversized-frame', 'forged-attestation', 'bad-output', 'vanish-after-accept'] as const) {
      await bad.libp2p.unhandle(PROTOCOL.job)
      await misbehavingProvider(bad, mode, { privateKey: forger, peerId: peerIdFromPrivateKey(forger) })
      const awards = listAwards(renter(), [bad.peerId, good.peerId])
      const summary = await runJob({
        libp2p: renter().libp2p, privateKey: renter().privateKey, peerId: renter().peerId, awards, jobId: Buffer.from(awards.jobId).toString('hex'), baseDir: join(tmp.path, 'out-' + mode), idleMs: 5_000, payload
      })
      assert.equal(summary.status, 'ok', `${mode}: ${JSON.stringify(summary.history)}`)
      assert.equal(summary.attempts, 2)
      assert.equal(summary.provider, good.peerId.toString())
      assert.equal(summary.attestation?.verified, true)
      const first = summary.history[0]
      const expected = { 'oversized-frame': 'lost', 'forged-attestation': 'bad_attestation', 'bad-output': 'bad_output', 'vanish-after-accept': 'lost' }[mode]
      assert.equal(first?.outcome, expected, `${mode}: ${first?.detail ?? ''}`)
      if (mode === 'oversized-frame') assert.match(first?.detail ?? '', /FRAME_TOO_LARGE/)
      if (mode === 'bad-output') {
        // the renter signed a BAD_OUTPUT receipt with the digest it actually received
        const receipt = await readFile(join(first?.dir as string, 'receipt.bin'))
        const got = openReceipt(receipt, { renter: renter().peerId, provider: bad.peerId, jobId: awards.jobId, attestationHash: (await import('../src/identity/index.js')).messageHash('attestation', (await import('../protocols/envelope.js')).SignedEnvelope.decode(await readFile(join(first?.dir as string, 'attestation.bin'))).payload) })
        assert.equal(got.value.outcome, Receipt.Outcome.BAD_OUTPUT)
        assert.equal(Buffer.compare(got.value.receivedOutputDigest, fileSetDigest([{ path: 'out.txt', size: 12n, sha256: sha256('real output\n') }])), 0)
      }
    }
  })

  it('gold preempts a running bronze job, which keeps its checkpoint and completes elsewhere', async () => {
    const busy = net.providers[1]
    const other = net.providers[0]
    assert.ok(busy != null && other != null)
    const bronzeAwards = listAwards(renter(), [busy.peerId, other.peerId], { tier: 'bronze', onAward: (_w, a) => { exec(net, 0).noteAccepted(a.award) } })
    const script = 'if [ -f inputs/checkpoint/ckpt.txt ]; then echo resumed from $(cat inputs/checkpoint/ckpt.txt) > outputs/final.txt; exit 0; fi; ' +
      'trap "echo step-1 > outputs/ckpt.txt; exit 0" TERM; echo working; while true; do sleep 0.1; done'
    const events: string[] = []
    const bronze = runJob({
      libp2p: renter().libp2p,
      privateKey: renter().privateKey,
      peerId: renter().peerId,
      awards: bronzeAwards,
      jobId: Buffer.from(bronzeAwards.jobId).toString('hex'),
      baseDir: join(tmp.path, 'out-preempt'),
      idleMs: 10_000,
      payload: { runtime: { command: ['/bin/sh', '-c', script], timeoutMs: 60_000 }, inputs: [] },
      onEvent: e => { if (e.type === 'log' || e.type === 'attempt-ended') events.push(`${e.attempt}:${e.type === 'log' ? e.line : e.outcome}`) }
    })
    await waitFor(() => events.includes('1:working'), { what: 'bronze job running' })
    const gold = await runAttempt(makeAward(renter(1), busy.peerId, { tier: 'gold' }), { runtime: { command: ['/bin/sh', '-c', 'echo gold > outputs/g.txt'], timeoutMs: 20_000 }, inputs: [] }, attemptOpts('gold', 1))
    assert.equal(gold.outcome, 'ok', gold.detail)
    const summary = await bronze
    assert.equal(summary.status, 'ok', JSON.stringify(summary.history))
    assert.deepEqual(summary.history.map(h => h.outcome), ['preempted', 'ok'])
    assert.equal(summary.provider, other.peerId.toString())
    assert.equal((await readFile(join(summary.history[0]?.dir as string, 'outputs', 'ckpt.txt'), 'utf8')).trim(), 'step-1')
    assert.equal((await readFile(join(summary.outputDir, 'outputs', 'final.txt'), 'utf8')).trim(), 'resumed from step-1')
    const preempted = attestations.find(a => a.jobId === Buffer.from(bronzeAwards.jobId).toString('hex') && a.attestation.value.status === JobStatus.PREEMPTED)
    assert.equal(preempted?.attestation.value.preemptible, true)
  })
})
