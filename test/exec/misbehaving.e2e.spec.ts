/**
 * Multi-process end to end with a misbehaving provider (issue #5): a bootstrap, an honest
 * provider and a renter each run as their own `idlegrid` process on 127.0.0.1; a cheaper
 * provider in this process (a real libp2p node built by the CLI's composition root) bids, wins
 * the first auction and then returns outputs that do not match its attestation, or a forged
 * attestation. `idlegrid submit JOB.yaml --json` must still end with the job done and verified
 * on the honest provider, and nobody may crash.
 */
import { strict as assert } from 'node:assert'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey, peerIdFromString } from '@libp2p/peer-id'
import { isJobShardTopic } from '../../protocols/ids.js'
import { Receipt } from '../../protocols/job.js'
import { startLocalNetwork, waitForMesh, type LocalNetwork, type NodeProcess } from '../utils/index.js'
import { callControl } from '../../src/control/index.js'
import type { IdlegridNode, NodeStatus } from '../../src/node/index.js'
import { joinMisbehavingProvider, openSavedReceipt, submitJob, type Misbehaviour } from './fixtures.js'
import { recordAttack, tempDir, waitFor } from '../utils/index.js'
import type { Ed25519PrivateKey } from '@libp2p/interface'

const alive = (p: NodeProcess): boolean => p.child.exitCode == null && p.child.signalCode == null

describe('exec: a misbehaving provider among separate processes', function () {
  this.timeout(240_000)
  let net: LocalNetwork
  let tmp: { path: string, cleanup: () => Promise<void> }
  const inProcess: IdlegridNode[] = []

  before(async () => {
    tmp = await tempDir('idlegrid-exec-misbehaving-')
    // the honest provider asks ten times the misbehaving one's floor: the cheap one wins first
    net = await startLocalNetwork({
      baseDir: tmp.path,
      providers: 1,
      renters: 1,
      providerArgs: () => ['--runner', 'process', '--simulate-gpu', 'H100:80', '--region', 'eu-west', '--price-floor', '5.00', '--grace', '2']
    })
    const view = await waitForMesh(net.all, 120_000)
    assert.ok(view.complete, view.missing.join('\n'))
    await writeFile(join(tmp.path, 'words.txt'), 'hello idlegrid\n')
    await writeFile(join(tmp.path, 'upper.yaml'), [
      'name: upper', 'tier: silver', 'workload: evaluation',
      'runtime:', `  command: [/bin/sh, -c, ${JSON.stringify('tr a-z A-Z < inputs/words.txt > outputs/upper.txt && echo done')}]`,
      'inputs: [words.txt]', 'estimatedMinutes: 1',
      'auction:', '  bidWindowMs: 700', '  acceptTimeoutMs: 3000'
    ].join('\n') + '\n')
  })

  // each case gets its own misbehaving provider: a stopped one cannot win the next case's auction
  afterEach(async () => {
    await Promise.all(inProcess.splice(0).map(async n => { await n.stop() }))
  })

  after(async () => {
    await Promise.all(inProcess.splice(0).map(async n => { await n.stop() }))
    await net?.stop()
    await tmp?.cleanup()
  })

  /** A fresh misbehaving provider (no reputation yet), once the renter and it see each other on the market topics. */
  async function joinBadProvider (mode: Misbehaviour): Promise<IdlegridNode> {
    const forger = await generateKeyPair('Ed25519') as Ed25519PrivateKey
    const node = await joinMisbehavingProvider({
      mode,
      dataDir: join(tmp.path, `bad-${mode}`),
      bootstrap: [net.bootstrap.addrs[0] as string],
      priceFloor: '0.50',
      forger: { privateKey: forger, peerId: peerIdFromPrivateKey(forger) }
    })
    inProcess.push(node)
    const renter = net.renters[0] as NodeProcess
    const me = node.peerId.toString()
    await waitFor(async () => {
      const s = await callControl(renter.dataDir, 'status', {}, { timeoutMs: 5_000 }) as NodeStatus
      // the renter knows the provider subscribed to a shard it publishes on (relayed by the
      // bootstrap otherwise) and hears it
      const shards = node.libp2p.services.pubsub.getTopics().filter(isJobShardTopic)
      const seenByRenter = shards.some(t => s.topics[t]?.includes(me) === true) && s.heard.some(h => h.peerId === me)
      // bids go straight to the renter (its addresses ride in the job request): hearing it is enough
      const seesRenter = node.libp2p.services.heartbeats.presence().some(h => h.peerId === renter.peerId)
      return seenByRenter && seesRenter
    }, { timeoutMs: 60_000, intervalMs: 250, what: `the renter and the ${mode} provider to see each other` })
    return node
  }

  async function submitPastBadProvider (
    mode: Misbehaviour,
    expectedFirst: string
  ): Promise<{ bad: IdlegridNode, summary: Record<string, any> }> {
    const bad = await joinBadProvider(mode)
    const renter = net.renters[0] as NodeProcess
    const honest = net.providers[0] as NodeProcess
    const { code, summary, stderr } = await submitJob(renter.dataDir, tmp.path, 'upper.yaml', ['--out-dir', join(tmp.path, `out-${mode}`)])
    assert.equal(code, 0, `${JSON.stringify(summary)}\n${stderr}`)
    assert.equal(summary.status, 'ok')
    assert.equal(summary.attempts, 2, JSON.stringify(summary.history))
    assert.equal(summary.history[0].provider, bad.peerId.toString(), 'the cheap misbehaving provider won the first auction')
    assert.equal(summary.history[0].outcome, expectedFirst, summary.history[0].detail)
    assert.equal(summary.history[1].outcome, 'ok')
    assert.equal(summary.provider, honest.peerId, 'completed on the honest provider')
    assert.equal(summary.attestation.status, 'COMPLETED')
    assert.equal(summary.attestation.verified, true)
    assert.equal(await readFile(join(summary.outputDir, 'outputs', 'upper.txt'), 'utf8'), 'HELLO IDLEGRID\n')
    // both sides survived: every child process still runs and answers, the in-process node is up
    for (const p of net.all) {
      assert.ok(alive(p), `${p.role} ${p.peerId} exited: ${p.stderr()}`)
      await callControl(p.dataDir, 'status', {}, { timeoutMs: 5_000 })
    }
    assert.equal(bad.libp2p.status, 'started')
    return { bad, summary }
  }

  it('outputs that do not match the attestation: receipt BAD_OUTPUT, the job completes on the honest provider', async () => {
    const { bad, summary } = await submitPastBadProvider('bad-output', 'bad_output')
    // the renter signed a BAD_OUTPUT receipt for the first attempt and kept it with its outputs
    const receipt = await openSavedReceipt(summary.history[0].dir, {
      renter: peerIdFromString((net.renters[0] as NodeProcess).peerId),
      provider: bad.peerId,
      jobId: Buffer.from(summary.jobId, 'hex')
    })
    assert.equal(receipt.message.outcome, Receipt.Outcome.BAD_OUTPUT)
  })

  it('a forged attestation: attempt bad_attestation, the job completes on the honest provider', async () => {
    const { summary } = await submitPastBadProvider('forged-attestation', 'bad_attestation')
    assert.match(summary.history[0].detail ?? '', /attestation does not verify/)
  })

  /** The renter process's peak resident memory so far, MiB (VmHWM), or undefined off Linux. */
  async function peakRssMib (p: NodeProcess): Promise<number | undefined> {
    const status = await readFile(`/proc/${String(p.child.pid)}/status`, 'utf8').catch(() => '')
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1]
    return kb == null ? undefined : Number(kb) / 1024
  }

  for (const [mode, what, limit] of [
    ['huge-log', '64 MiB of log lines', 'the renter\'s log cap (16 MiB)'],
    ['many-files', '5,000 output files', 'the renter\'s file limit (4,096)']
  ] as const) {
    it(`red team (issue 13 attack 4): a provider sends ${what} to a renter process: the attempt fails at ${limit}, the job completes on the honest provider`, async () => {
      const renter = net.renters[0] as NodeProcess
      const before = await peakRssMib(renter)
      const { summary } = await submitPastBadProvider(mode, 'bad_output')
      const after = await peakRssMib(renter)
      assert.match(summary.history[0].detail ?? '', mode === 'huge-log' ? /log/ : /files/)
      recordAttack({
        issue: '13.4',
        attack: `provider sends ${what} to an idlegrid renter process (separate processes)`,
        got: `attempt bad_output (${String(summary.history[0].detail ?? '').slice(0, 60)}); job ok on the honest provider; renter peak RSS ${before?.toFixed(0) ?? '?'} -> ${after?.toFixed(0) ?? '?'} MiB`,
        limit
      })
    })
  }
})
