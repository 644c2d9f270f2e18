import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { TOPIC } from '../../protocols/ids.js'
import { LedgerEntry } from '../../protocols/ledger.js'
import { Receipt } from '../../protocols/job.js'
import { type Role } from '../../src/config/index.js'
import { sha256 } from '../../src/identity/index.js'
import { signTestJob, type Signer } from '../../src/ledger/dev.js'
import { sealEntry, type LedgerRecord } from '../../src/ledger/entries/entry.js'
import { LedgerError } from '../../src/ledger/errors.js'
import { maxDropPerCounterparty } from '../../src/ledger/reputation/reputation.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import type { LedgerService } from '../../src/ledger/service/ledger-service.js'
import { recordAttack, startInProcessNetwork, tempDir, waitFor, waitForTopicMesh, type InProcessNetwork } from '../utils/index.js'
import { newSigner, signReceipt } from './feeds.js'
import { buildBadOutputProof } from './forgery.js'
import type { IdlegridNode, NodeExtensions } from '../../src/node/index.js'
import { isCoded } from '../../src/common/index.js'

// Issue 12 attacks 1 and 3, played by a renter node with nothing but the open code and fresh
// keys against a bootstrap and two honest providers (real libp2p nodes on 127.0.0.1, real
// LevelDB, real signatures). What the attacker signs is offered to each store directly (what
// a sync range does: the path every node uses) and also published on the legacy ledger topic,
// which these nodes open (gossip: true; off by default), so its validator is tried as well.

function ledgerExtensions (dataDir: string, role: Role): NodeExtensions {
  return {
    services: { ledger: ledgerService({ dataDir, role, syncIntervalMs: 2_000, summaryIntervalMs: 0, gossip: true }) }
  }
}

const ledgerOf = (node: IdlegridNode): LedgerService =>
  (node.libp2p.services as unknown as { ledger: LedgerService }).ledger
const signerOf = (node: IdlegridNode): Signer => ({ key: node.privateKey, peerId: node.peerId })
const headOf = (node: IdlegridNode, author: string): number => ledgerOf(node).store.head(author)?.seq ?? 0

/** An entry of another author that `node` holds and passes on (as a relay would). */
async function carry (node: IdlegridNode, envelope: Uint8Array): Promise<void> {
  await ledgerOf(node).ingest.ingestOne(envelope)
  await node.libp2p.services.pubsub.publish(TOPIC.ledger, envelope).catch(() => {})
}

/** An entry of the attacker's own feed that its own (honest) store would refuse: straight onto the wire. */
async function publishRaw (node: IdlegridNode, envelope: Uint8Array): Promise<void> {
  await node.libp2p.services.pubsub.publish(TOPIC.ledger, envelope)
}

function nextEntry (node: IdlegridNode, kind: LedgerEntry.BodyKind, body: Uint8Array, time: number): LedgerRecord {
  const head = ledgerOf(node).store.head(node.peerId.toString())
  return sealEntry(node.privateKey, node.peerId, {
    seq: (head?.seq ?? 0) + 1,
    prevHash: head?.hash ?? new Uint8Array(0),
    time,
    kind,
    body
  })
}

describe('ledger red team (issue 12, attacks 1 and 3): forged slashing and lying receipts', function () {
  this.timeout(120_000)
  let net: InProcessNetwork
  let dir: { path: string, cleanup: () => Promise<void> }
  let honestRenters: Signer[]

  before(async () => {
    dir = await tempDir('idlegrid-ledger-redteam-')
    let n = 0
    net = await startInProcessNetwork({ providers: 2, renters: 1, extensions: (role) => ledgerExtensions(join(dir.path, `${role}-${n++}`), role) })
    await waitForTopicMesh(net.all, TOPIC.ledger)
    honestRenters = await Promise.all(Array.from({ length: 6 }, newSigner))
  })
  after(async () => {
    await net.stop()
    await dir.cleanup()
  })

  /** `provider` runs an OK job for each honest renter; each renter's receipt travels from the provider. */
  async function honestHistory (provider: IdlegridNode, renters: Signer[]): Promise<void> {
    for (const r of renters) {
      const job = signTestJob({ provider: signerOf(provider), renter: r })
      await ledgerOf(provider).recordAttestation(job.attestation)
      const head = ledgerOf(provider).store.head(r.peerId.toString())
      const receipt = sealEntry(r.key, r.peerId, {
        seq: (head?.seq ?? 0) + 1,
        prevHash: head?.hash ?? new Uint8Array(0),
        time: Date.now(),
        kind: LedgerEntry.BodyKind.RECEIPT,
        body: job.receipt
      })
      await carry(provider, receipt.envelope)
    }
  }

  /** Waits until every node holds what `source` holds of each author in `authors`. */
  async function converged (authors: string[], source: IdlegridNode, what: string): Promise<void> {
    await waitFor(() => net.all.every(n => authors.every(a => headOf(n, a) === headOf(source, a))), {
      timeoutMs: 30_000,
      what
    })
  }

  /** Waits until the nodes other than `attacker` rejected at least one gossip message with `code`. */
  async function gossipRejected (attacker: IdlegridNode, code: string): Promise<number> {
    let seen = 0
    await waitFor(() => {
      seen = 0
      for (const n of net.all.filter(n => n !== attacker)) seen += n.libp2p.services.gossip.stats()[TOPIC.ledger]?.[`reject:${code}`] ?? 0
      return seen >= 1
    }, { timeoutMs: 15_000, what: `a gossip reject ${code}` })
    return seen
  }

  it('red team 12.1: a renter and a throwaway "re-run" key cannot slash an honest provider; it loses at most the renter\'s capped share on every node', async () => {
    const [victim] = net.providers
    const attacker = net.renters[0]
    const victimId = victim.peerId.toString()
    const attackerId = attacker.peerId.toString()
    await honestHistory(victim, honestRenters.slice(0, 5))
    await converged([victimId, ...honestRenters.slice(0, 5).map(r => r.peerId.toString())], victim, 'the victim\'s history everywhere')
    const at = Date.now() + 60_000
    // evidenceScore counts every renter fully (the same on every node); score is each node's
    // trust-weighted view, in which a renter with no standing counts for less or nothing
    const before = net.all.map(n => ledgerOf(n).reputation(victimId, at))

    // 1. a real job on the victim (the victim attests what it produced) and a BAD_OUTPUT receipt for it
    const input = sha256('inputs')
    const job = signTestJob({ provider: signerOf(victim), renter: signerOf(attacker), outcome: 'bad-output', inputDigest: input, outputDigest: sha256('the victim\'s real output') })
    const attestation = await ledgerOf(victim).recordAttestation(job.attestation)
    const badReceipt = await ledgerOf(attacker).recordReceipt(job.receipt)
    // 2. a "re-run" attested by a throwaway key that was never online, and an OK receipt for it
    const throwaway = await newSigner()
    const rerun = signTestJob({ provider: throwaway, renter: signerOf(attacker), outcome: 'ok', inputDigest: input, outputDigest: sha256('another output') })
    const rerunAttestation = sealEntry(throwaway.key, throwaway.peerId, {
      seq: 1,
      prevHash: new Uint8Array(0),
      time: Date.now(),
      kind: LedgerEntry.BodyKind.ATTESTATION,
      body: rerun.attestation
    })
    await carry(attacker, rerunAttestation.envelope)
    const rerunReceipt = await ledgerOf(attacker).recordReceipt(rerun.receipt)
    // 3. the protocol-1 proof, appended to the attacker's feed and published
    const proof = buildBadOutputProof(attacker.privateKey, attacker.peerId, {
      attestation,
      receipt: badReceipt,
      rerunAttestation,
      rerunReceipt
    })
    const proofEntry = nextEntry(attacker, LedgerEntry.BodyKind.FRAUD_PROOF, proof, Date.now())
    await publishRaw(attacker, proofEntry.envelope)
    const rejects = await gossipRejected(attacker, 'ERR_LEDGER_FRAUD_PROOF')
    for (const n of net.all) {
      const [outcome] = await ledgerOf(n).ingest.ingest([proofEntry.envelope])
      assert.ok(outcome.status === 'rejected' && isCoded(outcome.error, LedgerError, 'ERR_LEDGER_FRAUD_PROOF'), `${n.config.role} refuses the proof entry`)
    }
    await converged([victimId, attackerId, throwaway.peerId.toString()], attacker, 'the attacker\'s receipts everywhere')

    const after = net.all.map(n => ledgerOf(n).reputation(victimId, at))
    const maxDrop = maxDropPerCounterparty()
    for (const [i, n] of net.all.entries()) {
      assert.equal(ledgerOf(n).isExcluded(victimId), false, `${n.config.role} excludes the victim`)
      assert.equal(after[i].slashed, false)
      assert.equal(headOf(n, attackerId), rerunReceipt.seq, 'the proof entry is stored nowhere')
      const drop = before[i].evidenceScore - after[i].evidenceScore
      assert.ok(drop > 0, 'the BAD_OUTPUT receipt itself counts (one renter\'s word)')
      assert.ok(drop <= maxDrop, `${n.config.role}: drop ${drop} > one renter's capped share ${maxDrop}`)
      assert.ok(before[i].score - after[i].score <= maxDrop, `${n.config.role}: its own view dropped more than one renter's share`)
      assert.equal(after[i].evidenceScore, after[0].evidenceScore, 'every node holds the same evidence')
    }
    recordAttack({
      issue: '12.1',
      attack: 'BAD_OUTPUT fraud proof from a renter + throwaway "re-run" key against an honest provider',
      got: `slashed on 0/${net.all.length} nodes (proof rejected, ${rejects} gossip rejects); evidence score ${before[0].evidenceScore.toFixed(3)} -> ${after[0].evidenceScore.toFixed(3)}, trust-weighted ${before[0].score.toFixed(3)} -> ${after[0].score.toFixed(3)}`,
      limit: `only equivocation slashes; a BAD_OUTPUT receipt costs <= ${maxDrop.toFixed(3)} (one renter's capped share)`
    })

    // honest service continues: a new honest job still reaches every node and counts
    await honestHistory(victim, honestRenters.slice(5))
    await converged([victimId, honestRenters[5].peerId.toString()], victim, 'a later honest job everywhere')
    for (const n of net.all) assert.ok(ledgerOf(n).reputation(victimId, at).evidenceScore > after[0].evidenceScore)
  })

  it('red team 12.3: a back-dated PREEMPTED receipt cannot replace the OK receipt of a completed non-preemptible job', async () => {
    const provider = net.providers[1]
    const attacker = net.renters[0]
    const providerId = provider.peerId.toString()
    const attackerId = attacker.peerId.toString()
    await honestHistory(provider, honestRenters.slice(0, 2))
    // the job: completed, not preemptible; the attacker's honest software receipts it OK
    const job = signTestJob({ provider: signerOf(provider), renter: signerOf(attacker), outcome: 'ok', preemptible: false })
    await ledgerOf(provider).recordAttestation(job.attestation)
    const okReceipt = await ledgerOf(attacker).recordReceipt(job.receipt)
    await converged([providerId, attackerId, ...honestRenters.slice(0, 2).map(r => r.peerId.toString())], attacker, 'the job everywhere')
    const at = Date.now() + 60_000
    const before = net.all.map(n => ledgerOf(n).reputation(providerId, at))
    assert.equal(before[0].ok, 3)

    // (a) a PREEMPTED receipt dated an hour before the OK one, straight onto the wire and into every store
    const preempted = signReceipt(
      signerOf(attacker),
      signerOf(provider),
      job,
      Receipt.Outcome.PREEMPTED,
      sha256(job.jobId)
    )
    const backdated = nextEntry(attacker, LedgerEntry.BodyKind.RECEIPT, preempted, okReceipt.time - 3600_000)
    await publishRaw(attacker, backdated.envelope)
    const rejects = await gossipRejected(attacker, 'ERR_LEDGER_TIME_ORDER')
    for (const n of net.all) {
      const [outcome] = await ledgerOf(n).ingest.ingest([backdated.envelope])
      assert.ok(outcome.status === 'rejected' && isCoded(outcome.error, LedgerError, 'ERR_LEDGER_TIME_ORDER'), `${n.config.role} refuses the back-dated entry`)
    }
    // (b) the same PREEMPTED receipt, and a BAD_OUTPUT one, dated as the feed allows: stored, but not counted
    await ledgerOf(attacker).recordReceipt(preempted)
    await ledgerOf(attacker).recordReceipt(signReceipt(signerOf(attacker), signerOf(provider), job, Receipt.Outcome.BAD_OUTPUT, sha256('claimed')))
    await converged([attackerId], attacker, 'the later receipts everywhere')
    assert.equal(headOf(net.bootstrap, attackerId), okReceipt.seq + 2)

    const after = net.all.map(n => ledgerOf(n).reputation(providerId, at))
    for (const [i, n] of net.all.entries()) {
      assert.equal(after[i].score, before[i].score, `${n.config.role}: the score moved`)
      assert.equal(after[i].evidenceScore, before[i].evidenceScore, `${n.config.role}: the evidence score moved`)
      assert.equal(after[i].broken, 0)
      assert.equal(after[i].ok, 3)
    }
    recordAttack({
      issue: '12.3',
      attack: 'back-dated PREEMPTED (and later BAD_OUTPUT) receipt replacing the OK receipt of a completed non-preemptible job',
      got: `score ${before[0].score.toFixed(3)} -> ${after[0].score.toFixed(3)} on ${net.all.length} nodes; back-dated entry rejected (${rejects} gossip rejects), later receipts stored but not counted`,
      limit: 'first receipt per attestation in feed order; PREEMPTED only for an attested PREEMPTED; feed times non-decreasing'
    })
  })
})
