import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { TOPIC } from '../../protocols/ids.js'
import { resolveConfig, type Role } from '../../src/config/index.js'
import { signTestJob, type Signer } from '../../src/ledger/dev.js'
import { ReputationView } from '../../src/ledger/reputation/view.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import type { LedgerService } from '../../src/ledger/service/ledger-service.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { tempDir, waitFor } from '../utils/index.js'

// Ledger propagation without the global topic (issue 15.3, protocols/README.md §7
// "Propagation"): our new entries are announced to the counterparty and the trust seeds,
// which pull them; nobody else is sent anything; a fresh renter computes reputation from
// what it pulls from a bootstrap replica. Real nodes, real LevelDB, real signatures.

const ledgerOf = (node: IdlegridNode): LedgerService =>
  (node.libp2p.services as unknown as { ledger: LedgerService }).ledger
const signerOf = (node: IdlegridNode): Signer => ({ key: node.privateKey, peerId: node.peerId })
const holds = (node: IdlegridNode, author: IdlegridNode, seq: number): boolean =>
  (ledgerOf(node).store.head(author.peerId.toString())?.seq ?? 0) >= seq

describe('ledger propagation: push to counterparties and replicas, pull by the rest (issue 15.3)', function () {
  this.timeout(120_000)
  const nodes: IdlegridNode[] = []
  let dir: { path: string, cleanup: () => Promise<void> }

  async function start (
    name: string,
    role: Role,
    bootstrap: IdlegridNode | undefined,
    trusted: string[] = []
  ): Promise<IdlegridNode> {
    const addrs = bootstrap == null ? [] : [bootstrap.libp2p.getMultiaddrs()[0].toString()]
    const config = resolveConfig({ role, flags: { dataDir: join(dir.path, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: addrs, heartbeatSeconds: 5 } })
    // seeds as build-node passes them (the bootstrap peer, --trust); no periodic rounds and the
    // ledger topic off (the default): what moves is pushed or pulled on connect
    const seeds = [...(bootstrap == null ? [] : [bootstrap.peerId.toString()]), ...trusted]
    const node = await createNode(config, {
      services: {
        ledger: ledgerService({
          dataDir: config.dataDir,
          role,
          syncIntervalMs: 3600_000,
          summaryIntervalMs: 0,
          trustedPeers: seeds
        })
      }
    })
    nodes.push(node)
    return node
  }

  before(async () => { dir = await tempDir('idlegrid-ledger-push-') })
  after(async () => {
    await Promise.all(nodes.map(async n => { await n.stop() }))
    await dir.cleanup()
  })

  it('entries are pushed to the counterparty and the bootstrap replica and to no one else; a fresh renter syncing from the replica scores the provider exactly as a view of every entry does', async () => {
    const boot = await start('boot', 'bootstrap', undefined)
    const provider = await start('provider', 'provider', boot)
    const renter = await start('renter', 'renter', boot)
    const bystander = await start('bystander', 'renter', boot)
    await waitFor(() => [provider, renter, bystander].every(n => n.libp2p.getConnections(boot.peerId).length > 0), { what: 'every node to reach the bootstrap' })
    // the renter deals with the provider directly, as for a job
    await renter.libp2p.dial(provider.libp2p.getMultiaddrs()[0])
    const JOBS = 5
    for (let i = 0; i < JOBS; i++) {
      const signed = signTestJob({ provider: signerOf(provider), renter: signerOf(renter) })
      await ledgerOf(provider).recordAttestation(signed.attestation)
      await ledgerOf(renter).recordReceipt(signed.receipt)
    }
    await waitFor(() => holds(boot, provider, JOBS) && holds(boot, renter, JOBS), { timeoutMs: 20_000, what: 'the replica to pull both feeds' })
    await waitFor(() => holds(renter, provider, JOBS) && holds(provider, renter, JOBS), { timeoutMs: 20_000, what: 'each counterparty to pull the other\'s feed' })
    // pushed only to the counterparty and the seed (a bystander connected to them may still pull)
    const told = (n: IdlegridNode): string[] => [...ledgerOf(n).announcedTo().keys()].sort()
    assert.ok(bystander.libp2p.getConnections(boot.peerId).length > 0)
    assert.deepEqual(told(provider), [renter.peerId.toString(), boot.peerId.toString()].sort())
    assert.deepEqual(told(renter), [provider.peerId.toString(), boot.peerId.toString()].sort())
    assert.ok([...ledgerOf(provider).announcedTo().values()].every(n => n <= JOBS), 'a burst is announced in few requests')
    // the default: nobody joins the ledger topic or judges a message on it
    for (const n of nodes) {
      assert.ok(!n.libp2p.services.pubsub.getTopics().includes(TOPIC.ledger), `${n.config.role} joined ${TOPIC.ledger}`)
      assert.equal(n.libp2p.services.gossip.stats()[TOPIC.ledger], undefined)
    }

    // a fresh renter whose operator trusts that renter: it connects to the bootstrap only
    const fresh = await start('fresh', 'renter', boot, [renter.peerId.toString()])
    await waitFor(() => holds(fresh, provider, JOBS) && holds(fresh, renter, JOBS), { timeoutMs: 20_000, what: 'the fresh renter to pull the feeds from the replica' })
    const everything = new ReputationView(
      {},
      { selfId: fresh.peerId.toString(), trustedPeers: [boot.peerId.toString(), renter.peerId.toString()] }
    )
    for await (const record of ledgerOf(boot).store.entries()) everything.add(record)
    const now = Date.now()
    const expected = everything.reputation(provider.peerId.toString(), now)
    const got = ledgerOf(fresh).reputation(provider.peerId.toString(), now)
    assert.equal(got.jobs, JOBS)
    assert.ok(got.score > 0.5, `the trusted renter's receipts lift the provider (${got.score})`)
    assert.deepEqual(got, expected)
  })
})
