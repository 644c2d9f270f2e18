/**
 * Issue 12 attack 3, a receipt that lies about what happened: the attacker runs one real,
 * non-preemptible job on whichever honest provider wins (its honest software receipts it OK),
 * then, after the spec's "go", publishes a PREEMPTED receipt for the same attestation dated an
 * hour before the OK one, hoping "the earliest receipt counts" replaces the OK with a broken
 * job. Then the same PREEMPTED receipt dated as its feed allows (stored, but not counted).
 */
import { join } from 'node:path'
import { peerIdFromString } from '@libp2p/peer-id'
import { DOMAIN } from '../../../protocols/ids.js'
import { Attestation, Receipt } from '../../../protocols/job.js'
import { LedgerEntry } from '../../../protocols/ledger.js'
import { messageHash, openEnvelope } from '../../../src/identity/index.js'
import { signReceipt } from '../../ledger/feeds.js'
import { entryWithBody, ledgerOf, nextEntry, publishRaw, runRealJob } from './ledger-tools.js'
import type { Attack } from './attack.js'

export const backdatedReceipt: Attack = {
  summary: 'a real job, then a back-dated PREEMPTED receipt for it (and a later-dated one)',
  play: async ({ nodes: [me], options, log, report, go }) => {
    if (me == null) throw new Error('no node')
    const run = await runRealJob(me, 'backdate-bait', join(options['data-dir'] ?? '.', 'out'))
    const providerId = run.provider
    await entryWithBody(me, providerId, run.attestation.envelope)
    const okReceipt = await entryWithBody(me, me.peerId.toString(), run.receipt.envelope)
    report({ ran: true, provider: providerId, jobId: run.jobId, okReceiptSeq: okReceipt.seq })
    await go()

    const opened = openEnvelope(run.attestation.envelope, { domain: DOMAIN.attestation })
    const attested = Attestation.decode(opened.payload)
    const self = { key: me.privateKey, peerId: me.peerId }
    // signReceipt reads only the provider's peer id
    const provider = { key: me.privateKey, peerId: peerIdFromString(providerId) }
    const job = {
      jobId: attested.jobId,
      attestationHash: messageHash(DOMAIN.attestation, opened.payload),
      attestation: run.attestation.envelope,
      receipt: new Uint8Array(0)
    }
    const preempted = signReceipt(
      self,
      provider,
      job,
      Receipt.Outcome.PREEMPTED,
      attested.outputDigest,
      okReceipt.time - 3600_000
    )
    const backdated = nextEntry(me, LedgerEntry.BodyKind.RECEIPT, preempted, okReceipt.time - 3600_000)
    await publishRaw(me, backdated.envelope)
    // give the back-dated entry a head start before its properly dated twin (same seq) exists anywhere
    const stillRefused = await ledgerOf(me).ingest.ingest([backdated.envelope])
    log(`back-dated receipt published; own store says ${stillRefused[0]?.status ?? '?'}`)
    report({ backdated: true, hash: Buffer.from(backdated.hash).toString('hex'), seq: backdated.seq })
    await go()
    const later = await ledgerOf(me).recordReceipt(preempted)
    return { provider: providerId, okReceiptSeq: okReceipt.seq, backdatedSeq: backdated.seq, backdatedHash: Buffer.from(backdated.hash).toString('hex'), laterSeq: later.seq, laterHash: Buffer.from(later.hash).toString('hex') }
  }
}
