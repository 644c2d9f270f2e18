/**
 * Issue 12 attack 1, slash an honest provider: the attacker runs one real job on whichever
 * honest provider wins (the victim attests what it produced), then, after the spec's "go",
 * signs a BAD_OUTPUT receipt for it, has a throwaway key that was never online attest a
 * "re-run" with the same input and another output, receipts that OK, and publishes the
 * protocol-1 BAD_OUTPUT fraud proof built from all four entries.
 */
import { join } from 'node:path'
import { peerIdFromString } from '@libp2p/peer-id'
import { DOMAIN } from '../../../protocols/ids.js'
import { Attestation, Receipt } from '../../../protocols/job.js'
import { LedgerEntry } from '../../../protocols/ledger.js'
import { messageHash, openEnvelope, sha256 } from '../../../src/identity/index.js'
import { signTestJob } from '../../../src/ledger/dev.js'
import { sealEntry } from '../../../src/ledger/entries/entry.js'
import { newSigner, signReceipt } from '../../ledger/feeds.js'
import { buildBadOutputProof } from '../../ledger/forgery.js'
import { carry, entryWithBody, ledgerOf, nextEntry, publishRaw, runRealJob } from './ledger-tools.js'
import type { Attack } from './attack.js'

export const forgedSlash: Attack = {
  summary: 'a real job on the victim, then a BAD_OUTPUT fraud proof backed by a throwaway key\'s fake re-run',
  play: async ({ nodes: [me], options, log, report, go }) => {
    if (me == null) throw new Error('no node')
    const self = { key: me.privateKey, peerId: me.peerId }
    const run = await runRealJob(me, 'slash-bait', join(options['data-dir'] ?? '.', 'out'))
    const victimId = run.provider
    const attestation = await entryWithBody(me, victimId, run.attestation.envelope)
    const okReceipt = await entryWithBody(me, me.peerId.toString(), run.receipt.envelope)
    report({ ran: true, victim: victimId, jobId: run.jobId, okReceiptSeq: okReceipt.seq })
    await go()

    const opened = openEnvelope(run.attestation.envelope, { domain: DOMAIN.attestation })
    const attested = Attestation.decode(opened.payload)
    // signReceipt reads only the provider's peer id
    const victimSigner = { key: me.privateKey, peerId: peerIdFromString(victimId) }
    const job = {
      jobId: attested.jobId,
      attestationHash: messageHash(DOMAIN.attestation, opened.payload),
      attestation: run.attestation.envelope,
      receipt: new Uint8Array(0)
    }
    // 1. the renter's word: BAD_OUTPUT for the victim's attestation (a later receipt of its own feed)
    const badReceipt = await ledgerOf(me).recordReceipt(signReceipt(self, victimSigner, job, Receipt.Outcome.BAD_OUTPUT, sha256('not what I got')))
    // 2. a "re-run" by a throwaway key that was never online: same input, another output, receipted OK
    const throwaway = await newSigner()
    const rerun = signTestJob({ provider: throwaway, renter: self, outcome: 'ok', inputDigest: attested.inputDigest, outputDigest: sha256('the "right" output') })
    const rerunAttestation = sealEntry(throwaway.key, throwaway.peerId, {
      seq: 1,
      prevHash: new Uint8Array(0),
      time: Date.now(),
      kind: LedgerEntry.BodyKind.ATTESTATION,
      body: rerun.attestation
    })
    await carry(me, rerunAttestation.envelope)
    const rerunReceipt = await ledgerOf(me).recordReceipt(rerun.receipt)
    // 3. the proof, as the next entry of its feed, straight onto the wire (its own store refuses it)
    const proof = buildBadOutputProof(me.privateKey, me.peerId, {
      attestation,
      receipt: badReceipt,
      rerunAttestation,
      rerunReceipt
    })
    const proofEntry = nextEntry(me, LedgerEntry.BodyKind.FRAUD_PROOF, proof, Date.now())
    await publishRaw(me, proofEntry.envelope)
    log(`proof against ${victimId} published (entry seq ${proofEntry.seq})`)
    return {
      victim: victimId,
      throwaway: throwaway.peerId.toString(),
      rerunReceiptSeq: rerunReceipt.seq,
      proofSeq: proofEntry.seq,
      proofBytes: proofEntry.envelope.byteLength
    }
  }
}
