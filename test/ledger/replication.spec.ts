import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { TopicValidatorResult, type Message, type PeerId } from '@libp2p/interface'
import { TOPIC } from '../../protocols/ids.js'
import { HeartbeatSummary, LedgerEntry } from '../../protocols/ledger.js'
import { resolveConfig, type Role } from '../../src/config/index.js'
import { defaultLogger } from '@libp2p/logger'
import { signTestJob, type Signer } from '../../src/ledger/dev.js'
import { sealEntry } from '../../src/ledger/entries/entry.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import type { LedgerService } from '../../src/ledger/service/ledger-service.js'
import type { Reputation } from '../../src/ledger/reputation/reputation.js'
import { createNode, type IdlegridNode, type NodeExtensions } from '../../src/node/index.js'
import { startInProcessNetwork, tempDir, waitFor, type InProcessNetwork } from '../utils/index.js'
import { CONTROL_HANDLERS } from '../../src/control/index.js'

function ledgerExtensions (dataDir: string, role: Role): NodeExtensions {
  // every node replicates every feed here: these specs are of full replication (the bounded scope: scope.spec.ts)
  return { services: { ledger: ledgerService({ dataDir, role, syncIntervalMs: 2_000, summaryIntervalMs: 0, devMethods: true, replicate: 'all' }) } }
}

const ledgerOf = (node: IdlegridNode): LedgerService =>
  (node.libp2p.services as unknown as { ledger: LedgerService }).ledger
const signerOf = (node: IdlegridNode): Signer => ({ key: node.privateKey, peerId: node.peerId })
const heads = (node: IdlegridNode): string => JSON.stringify(ledgerOf(node).store.allHeads().map(h => `${h.authorId}:${h.seq}`).sort())

async function startLedgerNode (dataDir: string, role: Role, bootstrap: string[]): Promise<IdlegridNode> {
  const config = resolveConfig({ role, flags: { dataDir, listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap, heartbeatSeconds: 1 } })
  return await createNode(config, ledgerExtensions(config.dataDir, role))
}

/** provider `p` attests a job for renter `r`, and r receipts it, each into its own feed */
async function job (p: IdlegridNode, r: IdlegridNode, outcome: 'ok' | 'failed' = 'ok'): Promise<void> {
  const signed = signTestJob({ provider: signerOf(p), renter: signerOf(r), outcome })
  await ledgerOf(p).recordAttestation(signed.attestation)
  await ledgerOf(r).recordReceipt(signed.receipt)
}

describe('ledger replication (in-process nodes)', function () {
  this.timeout(120_000)
  let net: InProcessNetwork
  const extra: IdlegridNode[] = []
  let dir: { path: string, cleanup: () => Promise<void> }

  before(async () => {
    dir = await tempDir('idlegrid-ledger-repl-')
    // the in-process helper names data dirs itself; each ledger lives in its own folder under ours
    let n = 0
    // the default: no ledger topic, entries go by announcement to counterparties and seeds, and by pull
    net = await startInProcessNetwork({ providers: 2, renters: 1, extensions: (role) => ledgerExtensions(join(dir.path, `${role}-${n++}`), role) })
  })
  after(async () => {
    await Promise.all(extra.map(async n => { await n.stop() }))
    await net.stop()
    await dir.cleanup()
  })

  it('entries appended by providers and renters reach every node by announcement and pull (no ledger topic); every node holds the same evidence and scores it as it trusts the renters', async () => {
    const [p0, p1] = net.providers
    const [r0] = net.renters
    for (let i = 0; i < 3; i++) await job(p0, r0)
    await job(p1, r0, 'failed')
    await waitFor(() => net.all.every(n => heads(n) === heads(p0) && heads(n) === heads(r0)), { timeoutMs: 20_000, what: 'every node to hold every feed' })
    const now = Date.now()
    const scores = net.all.map(n => ledgerOf(n).reputation(p0.peerId.toString(), now))
    // what depends on the viewer: the score, the weighted sums behind it and the trust in each renter
    const evidence = ({
      score,
      jobScore,
      successWeight,
      failureWeight,
      counterparties,
      ...rest
    }: Reputation): unknown => ({ ...rest, counterparties: counterparties.map(({ trust, weight, ...c }) => c) })
    assert.equal(scores[0].jobs, 3)
    assert.ok(scores[0].evidenceScore > 0.5, `three OK jobs lift the score above the prior (${scores[0].evidenceScore})`)
    for (const s of scores) assert.deepEqual(evidence(s), evidence(scores[0]))
    // the renter's own receipts count fully in its view; the bootstrap has no path of trust to that renter
    assert.equal(ledgerOf(r0).reputation(p0.peerId.toString(), now).score, scores[0].evidenceScore)
    assert.equal(ledgerOf(net.bootstrap).reputation(p0.peerId.toString(), now).score, 0.5)
    const p1Score = ledgerOf(r0).reliability(p1.peerId.toString())
    assert.ok(p1Score < 0.5, `a failed job lowers it (${p1Score})`)
  })

  it('a node that joins later converges through the sync protocol alone', async () => {
    const late = await startLedgerNode(join(dir.path, 'late'), 'renter', [net.bootstrap.libp2p.getMultiaddrs()[0].toString()])
    extra.push(late)
    await waitFor(() => heads(late) === heads(net.bootstrap), { timeoutMs: 20_000, what: 'the late node to pull every feed' })
    const stats = await ledgerOf(late).status()
    assert.equal(stats.entries, (await ledgerOf(net.bootstrap).status()).entries)
  })

  it('the ledger topic is off by default: no node joins it, and an entry pushed on it anyway is ignored unread and stored nowhere', async () => {
    const p1 = net.providers[1]
    const receiver = net.bootstrap
    for (const n of net.all) assert.ok(!n.libp2p.services.pubsub.getTopics().includes(TOPIC.ledger), `${n.config.role} joined ${TOPIC.ledger}`)
    // p1's next entry, valid in every way, handed to the receiver's topic validator as gossipsub would
    const p1Head = ledgerOf(p1).store.head(p1.peerId.toString())
    const now = Date.now()
    const summary = HeartbeatSummary.encode({
      periodStart: BigInt(now - 60_000),
      periodEnd: BigInt(now),
      heartbeatsSent: 60,
      intervalMs: 1000,
      availableMs: 60_000n,
      upMs: 60_000n,
      slotsTotal: 1,
      busyPpm: 0
    })
    const next = sealEntry(p1.privateKey, p1.peerId, {
      seq: (p1Head?.seq ?? 0) + 1,
      prevHash: p1Head?.hash ?? new Uint8Array(0),
      time: now,
      kind: LedgerEntry.BodyKind.HEARTBEAT_SUMMARY,
      body: summary
    })
    const validators = (
      receiver.libp2p.services.pubsub as unknown as {
        topicValidators: Map<string, (from: PeerId, msg: Message) => Promise<TopicValidatorResult>>
      }
    ).topicValidators
    const validate = validators.get(TOPIC.ledger)
    assert.ok(validate != null)
    const message: Message = { type: 'unsigned', topic: TOPIC.ledger, data: next.envelope }
    assert.equal(await validate(p1.peerId, message), TopicValidatorResult.Ignore)
    assert.equal(receiver.libp2p.services.gossip.stats()[TOPIC.ledger]?.['ignore:ledger topic off here'], 1)
    assert.equal(ledgerOf(receiver).store.head(p1.peerId.toString())?.seq, p1Head?.seq, 'the entry was not stored')
  })

  it('an equivocating author is slashed by every node, and excluded from auctions', async () => {
    const [p0, p1] = net.providers
    const all = [...net.all, ...extra]
    await job(p1, net.renters[0])
    await waitFor(() => all.every(n => heads(n) === heads(p1)), { timeoutMs: 20_000, what: 'p1\'s entry everywhere' })
    // p1 signs a second entry for its held head's seq (with its own key) and it reaches one node
    const head = ledgerOf(p1).store.head(p1.peerId.toString())
    assert.ok(head != null)
    const held = await ledgerOf(p1).store.get(head.author, head.seq)
    assert.ok(held != null)
    const other = signTestJob({ provider: signerOf(p1), renter: signerOf(net.renters[0]) })
    const conflicting = sealEntry(p1.privateKey, p1.peerId, {
      seq: head.seq,
      prevHash: held.prevHash,
      time: Date.now(),
      kind: LedgerEntry.BodyKind.ATTESTATION,
      body: other.attestation
    })
    const [outcome] = await ledgerOf(net.bootstrap).ingest.ingest([conflicting.envelope])
    assert.equal(outcome.status, 'equivocation')
    await waitFor(() => all.every(n => ledgerOf(n).isExcluded(p1.peerId.toString())), { timeoutMs: 20_000, what: 'every node to slash p1' })
    for (const n of all) assert.equal(ledgerOf(n).reliability(p1.peerId.toString()), 0)
    assert.equal(ledgerOf(net.renters[0]).isExcluded(p0.peerId.toString()), false)
  })

  it('flush: a peer acknowledges our new head; a node alone says its entries are only local', async () => {
    const r0 = net.renters[0]
    const signed = signTestJob({ provider: signerOf(net.providers[0]), renter: signerOf(r0) })
    await ledgerOf(r0).recordReceipt(signed.receipt)
    const result = await ledgerOf(r0).flush({ timeoutMs: 10_000 })
    assert.equal(result.acknowledged, true)
    assert.ok(result.by.length > 0)

    const lonely = await startLedgerNode(join(dir.path, 'lonely'), 'renter', [])
    try {
      const job2 = signTestJob({ provider: signerOf(net.providers[0]), renter: signerOf(lonely) })
      await ledgerOf(lonely).recordReceipt(job2.receipt)
      const alone = await ledgerOf(lonely).flush({ timeoutMs: 500 })
      assert.equal(alone.acknowledged, false)
      assert.match(alone.note ?? '', /only|locally/)
    } finally {
      await lonely.stop()
    }
    // on its next run it connects, and peers pull what it holds
    const again = await startLedgerNode(join(dir.path, 'lonely'), 'renter', [net.bootstrap.libp2p.getMultiaddrs()[0].toString()])
    extra.push(again)
    await waitFor(async () => (await ledgerOf(again).flush({ timeoutMs: 2_000 })).acknowledged, { timeoutMs: 20_000, what: 'the returning node\'s entries to be held by a peer' })
    await waitFor(() => ledgerOf(net.bootstrap).store.head(again.peerId.toString())?.seq === 1, { timeoutMs: 10_000, what: 'the bootstrap to hold them' })
  })

  it('a restart keeps every entry and gives the same reputations', async () => {
    const node = extra[0]
    const dataDir = node.config.dataDir
    const now = Date.now()
    const before = {
      heads: heads(node),
      reps: JSON.stringify(ledgerOf(node).reputations(now)),
      status: await ledgerOf(node).status()
    }
    await node.stop()
    const restarted = await startLedgerNode(dataDir, 'renter', [])
    extra[0] = restarted
    assert.equal(heads(restarted), before.heads)
    assert.equal(JSON.stringify(ledgerOf(restarted).reputations(now)), before.reps)
    assert.equal((await ledgerOf(restarted).status()).entries, before.status.entries)
    assert.deepEqual((await ledgerOf(restarted).status()).slashed, before.status.slashed)
  })

  it('control methods: status, show, reputation JSON shape, and the dev method only when enabled', async () => {
    const p0 = net.providers[0]
    const handlers = ledgerOf(p0)[CONTROL_HANDLERS]()
    const noop = (): void => {}
    const signal = AbortSignal.timeout(10_000)
    const status = await handlers['ledger.status']({}, noop, signal) as { entries: number, heads: unknown[] }
    assert.ok(status.entries > 0 && status.heads.length > 0)
    const show = await handlers['ledger.show']({ peer: p0.peerId.toString(), limit: 2 }, noop, signal) as { entries: Array<{ kind: string }> }
    assert.equal(show.entries.length, 2)
    const reps = (await handlers.reputation({}, noop, signal)) as Array<{
      peerId: string
      score: number
      jobs: number
      slashed: boolean
    }>
    for (const r of reps) {
      assert.equal(typeof r.peerId, 'string')
      assert.ok(r.score >= 0 && r.score <= 1)
      assert.equal(typeof r.jobs, 'number')
      assert.equal(typeof r.slashed, 'boolean')
    }
    await assert.rejects(handlers['ledger.show']({ peer: 'not-a-peer' }, noop, signal), /not a peer id/)
    const made = await handlers['ledger.appendTestJob']({ count: 2, renter: 3 }, noop, signal) as { jobs: number }
    assert.equal(made.jobs, 2)
    // a provider's heartbeat summary (normally on a timer) reaches the others and counts as uptime
    const summary = await handlers['ledger.appendSummary']({}, noop, signal) as { seq: number }
    assert.ok(summary.seq > 0)
    await waitFor(() => ledgerOf(net.bootstrap).reputation(p0.peerId.toString()).summaries === 1, { timeoutMs: 15_000, what: 'the summary to reach the bootstrap' })
    assert.ok(ledgerOf(net.bootstrap).reputation(p0.peerId.toString()).uptime > 0.99, 'up since it started')
    await assert.rejects(handlers['ledger.appendTestJob']({ count: 5000 }, noop, signal), /count must be/)
    // without devMethods there is no such method
    const plain = ledgerService({ dataDir: join(dir.path, 'plain'), role: 'provider' })({ logger: defaultLogger(), privateKey: p0.privateKey, peerId: p0.peerId } as any)
    assert.equal(plain[CONTROL_HANDLERS]()['ledger.appendTestJob'], undefined)
    assert.ok(plain[CONTROL_HANDLERS]()['ledger.status'] != null)
  })
})
