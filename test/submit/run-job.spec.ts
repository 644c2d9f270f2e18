/**
 * The renter's job loop (runJob) against in-process providers: a job killed at its time limit
 * is not retried, a misbehaving provider does not lose the job, a preempted bronze job keeps
 * its checkpoint and completes elsewhere. (Moved from the exec specs with runJob itself.)
 */
import { strict as assert } from 'node:assert'
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { PROTOCOL } from '../../protocols/ids.js'
import { JobStatus, Receipt } from '../../protocols/job.js'
import { fileSetDigest } from '../../src/exec/shared/digest.js'
import { openReceipt } from '../../src/exec/shared/records.js'
import { runAttempt, type AwardedJob } from '../../src/exec/renter/attempt.js'
import { sha256 } from '../../src/identity/index.js'
import { runJob, type AwardSource } from '../../src/submit/run-job.js'
import { attestationsInLedger, execOf, makeAward, misbehavingProvider, useJobNetwork } from '../exec/fixtures.js'
import { waitFor, type InProcessNetwork } from '../utils/index.js'
import type { Tier } from '../../src/capability/index.js'
import type { IdlegridNode } from '../../src/node/index.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

/**
 * Awards the first provider of `providers` not excluded, in order, as a stand-in for the
 * market's auction (each award names the same job id). `onAward` sees every award given.
 */
function listAwards (
  renter: IdlegridNode,
  providers: PeerId[],
  opts: { tier?: Tier, jobId?: Uint8Array, onAward?: (winner: PeerId, awarded: AwardedJob) => void } = {}
): AwardSource & { jobId: Uint8Array } {
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

describe('submit: the job loop between in-process nodes', function () {
  this.timeout(120_000)
  const suite = useJobNetwork('idlegrid-run-job-')
  const { renter, attemptOpts } = suite

  it('kills a job at its time limit: attestation and receipt say timeout, and it is not retried', async () => {
    const provider = suite.net.providers[1]
    assert.ok(provider != null)
    const awards = listAwards(renter(), [provider.peerId, (suite.net.providers[0] as InProcessNetwork['providers'][number]).peerId])
    const summary = await runJob({
      libp2p: renter().libp2p,
      privateKey: renter().privateKey,
      peerId: renter().peerId,
      awards,
      jobId: Buffer.from(awards.jobId).toString('hex'),
      baseDir: join(suite.dir, 'out'),
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
    const bad = suite.net.providers[2]
    const good = suite.net.providers[1]
    assert.ok(bad != null && good != null)
    const forger = await generateKeyPair('Ed25519') as Ed25519PrivateKey
    for (const mode of ['oversized-frame', 'forged-attestation', 'bad-output', 'vanish-after-accept'] as const) {
      await bad.libp2p.unhandle(PROTOCOL.job)
      await misbehavingProvider(bad, mode, { privateKey: forger, peerId: peerIdFromPrivateKey(forger) })
      const awards = listAwards(renter(), [bad.peerId, good.peerId])
      const summary = await runJob({
        libp2p: renter().libp2p, privateKey: renter().privateKey, peerId: renter().peerId, awards, jobId: Buffer.from(awards.jobId).toString('hex'), baseDir: join(suite.dir, 'out-' + mode), idleMs: 5_000, payload: suite.payload
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
        const got = openReceipt(receipt, { renter: renter().peerId, provider: bad.peerId, jobId: awards.jobId, attestationHash: (await import('../../src/identity/index.js')).messageHash('attestation', (await import('../../protocols/envelope.js')).SignedEnvelope.decode(await readFile(join(first?.dir as string, 'attestation.bin'))).payload) })
        assert.equal(got.message.outcome, Receipt.Outcome.BAD_OUTPUT)
        assert.equal(Buffer.compare(got.message.receivedOutputDigest, fileSetDigest([{ path: 'out.txt', size: 12n, sha256: sha256('real output\n') }])), 0)
      }
    }
  })

  it('gold preempts a running bronze job, which keeps its checkpoint and completes elsewhere', async () => {
    const busy = suite.net.providers[1]
    const other = suite.net.providers[0]
    assert.ok(busy != null && other != null)
    const bronzeAwards = listAwards(renter(), [busy.peerId, other.peerId], { tier: 'bronze', onAward: (_w, a) => { execOf(other).noteAccepted(a.award) } })
    const script = 'if [ -f inputs/checkpoint/ckpt.txt ]; then echo resumed from $(cat inputs/checkpoint/ckpt.txt) > outputs/final.txt; exit 0; fi; ' +
      'trap "echo step-1 > outputs/ckpt.txt; exit 0" TERM; echo working; while true; do sleep 0.1; done'
    const events: string[] = []
    const bronze = runJob({
      libp2p: renter().libp2p,
      privateKey: renter().privateKey,
      peerId: renter().peerId,
      awards: bronzeAwards,
      jobId: Buffer.from(bronzeAwards.jobId).toString('hex'),
      baseDir: join(suite.dir, 'out-preempt'),
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
    const preempted = await waitFor(async () => (await attestationsInLedger(busy, Buffer.from(bronzeAwards.jobId).toString('hex'))).find(a => a.status === JobStatus.PREEMPTED), { what: 'the preempted attestation in the provider\'s ledger' })
    assert.equal(preempted.preemptible, true)
  })
})
