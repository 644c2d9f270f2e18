import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { SignedEnvelope } from '../../protocols/envelope.js'
import { DOMAIN, TOPIC } from '../../protocols/ids.js'
import { FraudProof, LedgerEntry } from '../../protocols/ledger.js'
import { resolveConfig, type Role } from '../../src/config/index.js'
import { sealEnvelope, sha256 } from '../../src/identity/index.js'
import { signTestJob } from '../../src/ledger/dev.js'
import { sealEntry } from '../../src/ledger/entries/entry.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import type { LedgerService, LedgerServiceInit } from '../../src/ledger/service/ledger-service.js'
import { LedgerIngest } from '../../src/ledger/ingest/ingest.js'
import { MAX_HEADS } from '../../src/ledger/sync/protocol.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { recordAttack, startInProcessNetwork, UNLIMITED_GOSSIP_RATES, tempDir, waitFor, waitForTopicMesh, type InProcessNetwork } from '../utils/index.js'
import { junkProofEntry, newSigner, summaryBody, TestFeed } from './flood-fixtures.js'
import type { Signer } from '../../src/ledger/dev.js'

// Issue 12 attack 4 over real libp2p nodes on 127.0.0.1: Sybil feeds cannot hide an honest
// one from sync, and a peer's junk cannot grow an honest node's ledger.

const ledgerOf = (node: IdlegridNode): LedgerService =>
  (node.libp2p.services as unknown as { ledger: LedgerService }).ledger
const SYBILS = 20_000

async function startLedgerNode (
  dataDir: string,
  role: Role,
  bootstrap: string[],
  init: Partial<LedgerServiceInit> = {}
): Promise<IdlegridNode> {
  const config = resolveConfig({ role, flags: { dataDir, listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap, heartbeatSeconds: 1 } })
  return await createNode(config, {
    services: {
      ledger: ledgerService({ dataDir: config.dataDir, role, syncIntervalMs: 600_000, summaryIntervalMs: 0, ...init })
    }
  })
}

/** A key whose author bytes sort after every key whose public key starts below 0xff. */
async function lastSortingSigner (): Promise<Signer> {
  for (;;) {
    const s = await newSigner()
    if (s.peerId.publicKey?.raw[0] === 0xff) return s
  }
}

/** Bytes of every feed stored (what the ledger holds, whatever LevelDB does with it on disk). */
function storedBytes (node: IdlegridNode): number {
  return ledgerOf(node).store.allHeads().reduce((sum, h) => sum + h.bytes, 0)
}

describe('ledger flood resistance over real nodes', function () {
  this.timeout(300_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  before(async () => { dir = await tempDir('idlegrid-flood-net-') })
  after(async () => { await dir.cleanup() })

  it(`sync pages through every head: ${SYBILS} Sybil feeds whose keys sort first cannot hide an honest feed (red team)`, async () => {
    const honest = new TestFeed(await lastSortingSigner())
    // the responder's store, filled directly with signed entries: the Sybils' and the honest feed
    const serverDir = join(dir.path, 'server')
    const owner = await newSigner()
    const filled = await LedgerIngest.open(join(serverDir, 'ledger'), { privateKey: owner.key, peerId: owner.peerId, syncWrites: false })
    let sybils = 0
    while (sybils < SYBILS) {
      const batch: Uint8Array[] = []
      while (batch.length < 1000) {
        const s = await newSigner()
        if ((s.peerId.publicKey?.raw[0] ?? 0xff) === 0xff) continue
        batch.push(new TestFeed(s).summary().envelope)
      }
      const outcomes = await filled.ingest(batch, { checkSignature: false })
      sybils += outcomes.filter(o => o.status === 'added').length
    }
    await filled.ingest([honest.summary().envelope, honest.summary().envelope])
    const first = await filled.store.headsPage(undefined, MAX_HEADS)
    assert.equal(first.heads.length, MAX_HEADS)
    assert.ok(first.more)
    assert.ok(!first.heads.some(h => h.authorId === honest.id), 'the honest feed is not on the first page')
    await filled.close()

    const server = await startLedgerNode(serverDir, 'bootstrap', [])
    // the client trusts the honest author only
    const client = await startLedgerNode(join(dir.path, 'client'), 'renter', [server.libp2p.getMultiaddrs()[0].toString()], { trustedPeers: [honest.id] })
    try {
      await waitFor(() => ledgerOf(client).store.head(honest.id)?.seq === 2 || undefined, { timeoutMs: 120_000, what: 'the client to pull the honest feed past the Sybils' })
      const stats = await ledgerOf(client).ingest.stats()
      assert.ok((stats.quarantine?.entries ?? 0) <= 2048, 'the Sybils it pulled wait in the bounded quarantine')
      assert.equal(stats.authors, 1, 'of the Sybil feeds none is stored')
      recordAttack({ issue: '12.4', attack: `${SYBILS} Sybil feeds whose keys sort before an honest one, served by one peer`, got: `honest feed synced: yes; Sybil feeds stored: ${stats.authors - 1}, quarantined: ${stats.quarantine?.authors ?? 0}`, limit: `heads paged (${MAX_HEADS} per page, cursor after the last author); feeds with standing pulled first` })
    } finally {
      await client.stop()
      await server.stop()
    }
  })

  describe('red team: one peer floods an honest node\'s ledger (issue 12 attack 4)', () => {
    let net: InProcessNetwork
    let k = 0
    before(async () => {
      // the legacy ledger topic opened (off by default): the flood comes over gossip
      net = await startInProcessNetwork({ providers: 1, renters: 1, extensions: (role) => ({ services: { ledger: ledgerService({ dataDir: join(dir.path, `${role}-${k++}`), role, syncIntervalMs: 2_000, summaryIntervalMs: 0, gossip: true }) }, gossipRateLimits: UNLIMITED_GOSSIP_RATES }) })
      await waitForTopicMesh(net.all, TOPIC.ledger)
    })
    after(async () => { await net.stop() })

    /**
     * How far the honest node got with a flood, for a wait that timed out: its verdicts, and
     * whether the attacker is still its gossip peer and with what streams.
     */
    function floodState (judged: number): string {
      const [honest, attacker] = [net.bootstrap, net.renters[0]]
      const gossipPeer = honest.libp2p.services.pubsub.getPeers().some(p => p.equals(attacker.peerId))
      const streams = attacker.libp2p.getConnections(honest.peerId).flatMap(c => c.streams.map(st => `${st.protocol ?? '?'} ${st.direction} ${st.status}`))
      return `judged ${judged}; verdicts ${JSON.stringify(honest.libp2p.services.gossip.stats()[TOPIC.ledger])}; the attacker is ${gossipPeer ? '' : 'no longer '}a gossip peer of it; the attacker's streams to it: ${streams.join(', ')}`
    }

    /** The honest provider appends a job; resolves once the honest node holds it. */
    async function honestEntryReplicates (): Promise<void> {
      const [provider] = net.providers
      const renter = await newSigner()
      const job = signTestJob({ provider: { key: provider.privateKey, peerId: provider.peerId }, renter })
      const entry = await ledgerOf(provider).recordAttestation(job.attestation)
      await waitFor(() => ledgerOf(net.bootstrap).store.head(provider.peerId.toString())?.seq === entry.seq || undefined, { timeoutMs: 30_000, what: 'the honest provider\'s entry to reach the honest node' })
    }

    it('1000 junk equivocation-proof entries (~27 KiB each, throwaway keys) gossiped by one peer grow the honest node\'s ledger by at most 1 MB; honest entries still replicate', async () => {
      const honest = net.bootstrap
      const attacker = net.renters[0]
      await honestEntryReplicates()
      const before = {
        disk: (await ledgerOf(honest).store.stats()).diskBytes,
        stored: storedBytes(honest),
        slashed: ledgerOf(honest).store.slashedAuthors().length
      }
      const judged = (): number =>
        Object.entries(honest.libp2p.services.gossip.stats()[TOPIC.ledger] ?? {}).reduce((sum, [, v]) => sum + v, 0)
      const judgedBefore = judged()
      const junk = await Promise.all(Array.from({ length: 1000 }, async () => await junkProofEntry()))
      const size = junk.reduce((sum, r) => sum + r.envelope.byteLength, 0)
      for (const record of junk) await attacker.libp2p.services.pubsub.publish(TOPIC.ledger, record.envelope)
      await waitFor(() => judged() - judgedBefore >= 1000 || undefined, { timeoutMs: 120_000, what: 'the honest node to judge the 1000 junk entries' })
        .catch((err: Error) => { throw new Error(`${err.message}: ${floodState(judged() - judgedBefore)}`, { cause: err }) })
      await honestEntryReplicates()
      const after = {
        disk: (await ledgerOf(honest).store.stats()).diskBytes,
        stored: storedBytes(honest),
        slashed: ledgerOf(honest).store.slashedAuthors().length
      }
      const quarantine = (await ledgerOf(honest).ingest.stats()).quarantine
      const grown = { disk: after.disk - before.disk, stored: after.stored - before.stored }
      recordAttack({ issue: '12.4', attack: `1000 junk equivocation-proof entries (${(size / 1000 / 1024).toFixed(1)} KiB each, throwaway keys) gossiped by one peer`, got: `ledger +${(grown.stored / 1e6).toFixed(3)} MB stored, +${(grown.disk / 1e6).toFixed(3)} MB on disk; ${after.slashed - before.slashed} authors slashed; quarantine holds ${quarantine?.entries ?? 0} entries (${((quarantine?.bytes ?? 0) / 1e6).toFixed(1)} MB in memory)`, limit: '≤ 1 MB growth; quarantine ≤ 8 MiB / 2048 entries, never on disk' })
      assert.ok(grown.stored <= 1_000_000, `stored bytes grew by ${grown.stored}`)
      assert.ok(grown.disk <= 1_000_000, `the ledger directory grew by ${grown.disk} bytes`)
      assert.equal(after.slashed, before.slashed, 'no throwaway author is slashed: the proofs wait in the quarantine')
      assert.ok(quarantine != null && quarantine.bytes <= 8 * 1024 * 1024)
    })

    it('the same junk written into the attacker\'s own feed (a connected peer) stops at its provisional byte budget; honest entries still replicate', async () => {
      const honest = net.bootstrap
      const attacker = net.renters[0]
      const attackerId = attacker.peerId.toString()
      const before = { disk: (await ledgerOf(honest).store.stats()).diskBytes, stored: storedBytes(honest) }
      const judged = (): number =>
        Object.entries(honest.libp2p.services.gossip.stats()[TOPIC.ledger] ?? {}).reduce((sum, [, v]) => sum + v, 0)
      const judgedBefore = judged()
      const junk = await Promise.all(Array.from({ length: 1000 }, async () => await junkProofEntry()))
      // each junk proof re-signed by the attacker as the next entry of its own feed
      const feed = new TestFeed({ key: attacker.privateKey, peerId: attacker.peerId })
      for (const record of junk) {
        const proof = FraudProof.decode(sealedPayload(record.body))
        const entry = feed.entry(
          LedgerEntry.BodyKind.FRAUD_PROOF,
          sealEnvelope(attacker.privateKey, attacker.peerId, DOMAIN.fraudProof, FraudProof.encode(proof))
        )
        await attacker.libp2p.services.pubsub.publish(TOPIC.ledger, entry.envelope)
      }
      await waitFor(() => judged() - judgedBefore >= 1000 || undefined, { timeoutMs: 120_000, what: 'the honest node to judge the attacker\'s 1000 entries' })
        .catch((err: Error) => { throw new Error(`${err.message}: ${floodState(judged() - judgedBefore)}`, { cause: err }) })
      await honestEntryReplicates()
      const after = { disk: (await ledgerOf(honest).store.stats()).diskBytes, stored: storedBytes(honest) }
      const held = ledgerOf(honest).store.head(attackerId)?.seq ?? 0
      const grown = { disk: after.disk - before.disk, stored: after.stored - before.stored }
      recordAttack({ issue: '12.4', attack: '1000 junk equivocation-proof entries (~27 KiB) in the attacker\'s own feed, from a connected peer', got: `honest node holds ${held} of them: ledger +${(grown.stored / 1e6).toFixed(3)} MB stored, +${(grown.disk / 1e6).toFixed(3)} MB on disk`, limit: '512 KiB provisional budget per connected peer\'s tree; ≤ 1 MB growth' })
      assert.ok(held < 1000)
      assert.ok(grown.stored <= 1_000_000, `stored bytes grew by ${grown.stored}`)
      assert.ok(grown.disk <= 1_000_000, `the ledger directory grew by ${grown.disk} bytes`)
    })

    // last: its rejects score the attacker down
    it('on the topic, a forged signature and a body-forged entry are rejected (scored), a replay refused and a chain break ignored; none is stored', async () => {
      const [provider] = net.providers
      const attacker = net.renters[0]
      const pubsub = attacker.libp2p.services.pubsub
      const honest = net.all.filter(n => n !== attacker)
      const heads = (): string => JSON.stringify(honest.map(n => ledgerOf(n).store.allHeads().map(h => `${h.authorId}:${h.seq}`).sort()))
      const before = heads()
      const head = ledgerOf(provider).store.head(provider.peerId.toString())
      assert.ok(head != null)
      // 1. a tampered signature (the router's check)
      const forger = await newSigner()
      const good = new TestFeed(forger).summary()
      const env = SignedEnvelope.decode(good.envelope)
      const sig = Uint8Array.from(env.signature); sig[3] ^= 1
      await pubsub.publish(TOPIC.ledger, SignedEnvelope.encode({ ...env, signature: sig }))
      // 2. a feed entry carrying an attestation signed by the provider (the body check)
      const stolen = signTestJob({ provider: { key: provider.privateKey, peerId: provider.peerId }, renter: forger })
      await pubsub.publish(
        TOPIC.ledger,
        new TestFeed(forger).entry(LedgerEntry.BodyKind.ATTESTATION, stolen.attestation).envelope
      )
      // 3. a replay of the provider's head entry, relayed by the attacker: the same bytes on the
      // same topic are the same gossip message (one id, StrictNoSign), which the attacker's own
      // gossipsub has seen and will not send again; any node's seen-cache would drop it too
      const replay = await ledgerOf(provider).store.get(head.author, head.seq)
      assert.ok(replay != null)
      await assert.rejects(pubsub.publish(TOPIC.ledger, replay.envelope), /Duplicate/)
      // 4. the provider's next seq on a wrong prev hash (the test holds its key)
      const broken = sealEntry(provider.privateKey, provider.peerId, { seq: head.seq + 1, prevHash: sha256('not its head'), time: Date.now(), kind: LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, body: summaryBody() })
      await pubsub.publish(TOPIC.ledger, broken.envelope)
      let stats: Record<string, number> = {}
      await waitFor(() => {
        stats = {}
        for (const n of honest) {
          for (const [k, v] of Object.entries(n.libp2p.services.gossip.stats()[TOPIC.ledger] ?? {})) {
            stats[k] = (stats[k] ?? 0) + v
          }
        }
        return (stats['reject:bad-signature'] ?? 0) >= 1 && (stats['reject:ERR_LEDGER_BODY'] ?? 0) >= 1 &&
          (stats['ignore:does not extend the held feed'] ?? 0) >= 1
      }, { timeoutMs: 15_000, what: 'the honest nodes to judge the three messages sent' }).catch((err: Error) => { throw new Error(`${err.message}: ${JSON.stringify(stats)}`) })
      assert.equal(heads(), before, 'nothing was stored')
    })
  })
})

/** The payload of a signed envelope (the junk proof's FraudProof, to re-sign it). */
function sealedPayload (envelope: Uint8Array): Uint8Array {
  return SignedEnvelope.decode(envelope).payload
}
