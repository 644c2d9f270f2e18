/**
 * The provider's check of the renter's receipt names what is wrong: BAD_SIGNATURE only when
 * the envelope does not verify, BAD_RECEIPT when it verifies but answers something else
 * (protocols/README.md §7 "Verification").
 */
import { strict as assert } from 'node:assert'
import { randomBytes } from 'node:crypto'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { JobStatus, Receipt } from '../../protocols/job.js'
import { awaitReceipt } from '../../src/exec/provider/deliver.js'
import { isStreamError } from '../../src/exec/errors.js'
import { signAttestation, signReceipt } from '../../src/exec/shared/records.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

const bytes = (n: number): Uint8Array => new Uint8Array(randomBytes(n))

async function party (): Promise<{ key: Ed25519PrivateKey, id: PeerId }> {
  const key = await generateKeyPair('Ed25519')
  return { key, id: peerIdFromPrivateKey(key) }
}

describe('exec: the provider\'s receipt check names what is wrong', () => {
  it('a receipt for this attestation passes; one for another attestation is BAD_RECEIPT; a bad signature is BAD_SIGNATURE', async () => {
    const renter = await party()
    const provider = await party()
    const jobId = bytes(16)
    const attestation = signAttestation(provider.key, provider.id, {
      jobId,
      renter: renter.id,
      inputDigest: bytes(32),
      outputDigest: bytes(32),
      startedAt: 1,
      endedAt: 2,
      status: JobStatus.COMPLETED,
      exitCode: 0,
      gpus: [{ uuid: 'GPU-x', model: 'h100-80gb' }],
      telemetry: { avgUtilPpm: 0, maxTempC: 0, energyMj: 0n, samples: 0, simulated: true },
      awardHash: bytes(32),
      preemptible: false
    })
    const expect = { renter: renter.id, provider: provider.id, jobId, attestation }
    const receiptFor = (attestationHash: Uint8Array): Uint8Array =>
      signReceipt(renter.key, renter.id, {
        jobId,
        provider: provider.id,
        attestationHash,
        outcome: Receipt.Outcome.OK,
        latencyMs: 5,
        pricePaidMicroUsd: 1n,
        receivedOutputDigest: attestation.message.outputDigest
      }).envelope
    const answer = async (receipt: Uint8Array): Promise<unknown> =>
      await awaitReceipt(Promise.resolve({ frame: { receipt } }), 1_000, expect).catch((err: unknown) => err)

    const ok = await answer(receiptFor(attestation.hash))
    assert.ok(!(ok instanceof Error), String(ok))

    const other = await answer(receiptFor(bytes(32)))
    assert.ok(isStreamError(other))
    assert.equal(other.wireCode, 'BAD_RECEIPT')
    assert.match(other.message, /answers another attestation/)

    const tampered = receiptFor(attestation.hash)
    tampered[tampered.length - 1] ^= 1 // the last byte is the signature's
    const forged = await answer(tampered)
    assert.ok(isStreamError(forged))
    assert.equal(forged.wireCode, 'BAD_SIGNATURE')
  })
})
