/**
 * The sync a new connection starts (src/ledger/service/ledger-node.ts): once identify says the peer speaks
 * the sync protocol, the node asks for its heads and pulls what it lacks. The feeds here are of
 * authors who are not on the network (signed offline), so neither their announcements nor
 * heartbeat hints can bring them: only that heads exchange can.
 */
import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { PROTOCOL } from '../../protocols/ids.js'
import { LedgerEntry } from '../../protocols/ledger.js'
import { resolveConfig, type Role } from '../../src/config/index.js'
import { signTestJob, type Signer } from '../../src/ledger/dev.js'
import { sealEntry } from '../../src/ledger/entries/entry.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import type { LedgerService, LedgerServiceInit } from '../../src/ledger/service/ledger-service.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { tempDir, waitFor } from '../utils/index.js'

const ledgerOf = (node: IdlegridNode): LedgerService =>
  (node.libp2p.services as unknown as { ledger: LedgerService }).ledger

async function offlineSigner (): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

describe('ledger: the sync a new connection starts', function () {
  this.timeout(60_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  const nodes: IdlegridNode[] = []

  before(async () => { dir = await tempDir('idlegrid-connect-sync-') })
  after(async () => {
    await Promise.all(nodes.map(async n => { await n.stop() }))
    await dir.cleanup()
  })

  async function start (
    name: string,
    role: Role,
    bootstrap: IdlegridNode | undefined,
    ledger: Partial<LedgerServiceInit>,
    services: Record<string, (components: any) => unknown> = {}
  ): Promise<IdlegridNode> {
    const config = resolveConfig({ role, flags: { dataDir: join(dir.path, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: bootstrap == null ? [] : [bootstrap.libp2p.getMultiaddrs()[0].toString()], heartbeatSeconds: 60 } })
    const node = await createNode(config, {
      services: {
        ...services,
        ledger: ledgerService({ dataDir: config.dataDir, role, summaryIntervalMs: 0, ...ledger })
      }
    })
    nodes.push(node)
    return node
  }

  /** A holder (bootstrap role) of five entries each of two authors who are offline. */
  async function holderOfOfflineFeeds (name: string): Promise<{ holder: IdlegridNode, authors: string[] }> {
    const provider = await offlineSigner()
    const renter = await offlineSigner()
    const authors = [provider.peerId.toString(), renter.peerId.toString()]
    const holder = await start(name, 'bootstrap', undefined, { trustedPeers: authors })
    let providerPrev: Uint8Array = new Uint8Array(0)
    let renterPrev: Uint8Array = new Uint8Array(0)
    for (let seq = 1; seq <= 5; seq++) {
      const job = signTestJob({ provider, renter, at: Date.now() - 1000 })
      const attestation = sealEntry(provider.key, provider.peerId, {
        seq,
        prevHash: providerPrev,
        time: Date.now() - 1000,
        kind: LedgerEntry.BodyKind.ATTESTATION,
        body: job.attestation
      })
      const receipt = sealEntry(renter.key, renter.peerId, {
        seq,
        prevHash: renterPrev,
        time: Date.now() - 1000,
        kind: LedgerEntry.BodyKind.RECEIPT,
        body: job.receipt
      })
      providerPrev = attestation.hash
      renterPrev = receipt.hash
      const outcomes = await ledgerOf(holder).ingest.ingest([attestation.envelope, receipt.envelope])
      if (outcomes.some(o => o.status !== 'added')) throw new Error(`the holder refused an entry: ${JSON.stringify(outcomes.map(o => o.status))}`)
    }
    return { holder, authors }
  }

  it('a node that connects pulls the feeds of offline authors as soon as identify answers (no periodic round, no fallback timer)', async () => {
    const { holder, authors } = await holderOfOfflineFeeds('holder')
    // the periodic round and the fallback after a silent identify both an hour away: only identify can start this sync
    const fresh = await start('fresh', 'renter', holder, { trustedPeers: authors, syncIntervalMs: 3_600_000, identifyWaitMs: 3_600_000 })
    await waitFor(() => authors.every(id => ledgerOf(fresh).store.head(id)?.seq === 5), { timeoutMs: 20_000, what: 'the fresh node to pull both offline feeds on connect' })
  })

  it('a connection that opened while the node started (before the ledger listened for connections) gets the same first sync', async () => {
    const { holder, authors } = await holderOfOfflineFeeds('early-holder')
    // a service started beside the ledger that opens the connection and waits until identify
    // has answered: both happen before the ledger's afterStart adds its peer:connect listener
    const dialsEarly = (components: {
      connectionManager: { openConnection: (addr: unknown) => Promise<unknown> }
      peerStore: { get: (peer: unknown) => Promise<{ protocols: string[] }> }
    }): unknown => ({
      start: async () => {
        // the connection manager starts beside this service: dial once it has
        const dial = async (): Promise<boolean> => await components.connectionManager.openConnection(holder.libp2p.getMultiaddrs()[0]).then(() => true, (err: Error) => { if (err.name === 'NotStartedError') return false; throw err })
        await waitFor(dial, { timeoutMs: 10_000, intervalMs: 10, what: 'the connection manager to start' })
        await waitFor(async () => (await components.peerStore.get(holder.peerId).catch(() => undefined))?.protocols.includes(PROTOCOL.ledgerSync) === true, { timeoutMs: 10_000, what: 'identify to answer during start' })
      },
      stop: () => {}
    })
    const early = await start('early', 'renter', undefined, { trustedPeers: authors, syncIntervalMs: 3_600_000, identifyWaitMs: 3_600_000 }, { dialsEarly })
    await waitFor(() => authors.every(id => ledgerOf(early).store.head(id)?.seq === 5), { timeoutMs: 20_000, what: 'the node to pull both offline feeds from the peer it connected to while starting' })
  })

  it('a peer whose identify does not list the sync protocol is not asked, not even after the fallback wait', async () => {
    const ledgerNode = await start('asker', 'renter', undefined, { syncIntervalMs: 3_600_000, identifyWaitMs: 300 })
    // a node without the ledger service: identify tells the asker it has no sync protocol
    const config = resolveConfig({ role: 'renter', flags: { dataDir: join(dir.path, 'bare'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [ledgerNode.libp2p.getMultiaddrs()[0].toString()], heartbeatSeconds: 60 } })
    const bare = await createNode(config)
    nodes.push(bare)
    await waitFor(async () => (await ledgerNode.libp2p.peerStore.get(bare.peerId).catch(() => undefined))?.protocols.includes(PROTOCOL.heartbeat) === true, { timeoutMs: 10_000, what: 'the asker to identify the bare node' })
    // only now does the bare node answer sync requests: a fallback sync would reach this handler
    let asked = 0
    await bare.libp2p.handle(PROTOCOL.ledgerSync, ({ stream }) => { asked++; stream.abort(new Error('not a ledger node')) })
    await new Promise(resolve => setTimeout(resolve, 1_000))
    assert.equal(asked, 0, 'the asker sent a sync request to a peer that said it has no sync protocol')
  })
})
