/**
 * capability.json (DHT values under their keys, packed and unpacked accepted_tiers) and
 * job-frames.json (each JobFrame member, the oneof rule, attestation and receipt frames).
 */

import { CapabilityRecord } from '../../../protocols/capability.js'
import { DOMAIN, SIGNING_PREFIX } from '../../../protocols/ids.js'
import { JobFrame, JobStatus } from '../../../protocols/job.js'
import { capabilityKeyText } from '../../../src/capability/record/record-key.js'
import { accept, envelopeMeaning, keyEntry, NOW, party, reject, seal, type Party } from './build.js'
import { hex, meaning, VECTOR_FORMAT, type Vector, type VectorCheck, type VectorFile, type VectorStage } from './format.js'
import { attestation, JOB_ID, receipt, sha256 } from './messages.js'
import { unknownField, Writer } from './writer.js'

type Outcome = 'accept' | [reason: string, stage: VectorStage]

function record (p: Party, change: Partial<CapabilityRecord> = {}): CapabilityRecord {
  return {
    peerId: p.id,
    sequence: 3n,
    issuedAt: BigInt(NOW - 60_000),
    expiresAt: BigInt(NOW + 30 * 60_000),
    gpus: [{ model: 'rtx-4090', vramMib: 24_564, count: 1, computeCapability: '8.9', driverVersion: '550.54', uuidHash: [sha256('GPU-1')], simulated: false }],
    region: 'eu-west',
    residency: 'eu',
    priceFloorMicroUsd: 900_000n,
    acceptedTiers: [CapabilityRecord.Tier.SILVER, CapabilityRecord.Tier.BRONZE],
    workloads: ['inference', 'batch-inference'],
    allowedImages: [],
    availability: [],
    timeZone: '',
    cachedDatasets: [],
    maxJobMinutes: 120,
    maxTemperatureC: 83,
    maxPowerWatts: 450,
    preemptionGraceMs: 30_000,
    listenAddrs: [],
    runner: 'process',
    ...change
  }
}

/** The record encoded by protons (accepted_tiers unpacked, one tag per element), with the tiers rewritten packed. */
function packedTiers (r: CapabilityRecord): Uint8Array {
  const unpacked = CapabilityRecord.encode({ ...r, acceptedTiers: [] })
  const tiers = new Writer()
  for (const t of r.acceptedTiers) tiers.varint(BigInt(Object.keys(CapabilityRecord.Tier).indexOf(t)))
  return Uint8Array.from([...unpacked, ...new Writer().bytesField(9, tiers.bytes()).bytes()])
}

export async function makeCapability (): Promise<VectorFile> {
  const bob = await party('bob')
  const carol = await party('carol')
  const v = (
    name: string,
    bytes: Uint8Array,
    outcome: Outcome,
    opts: { key?: Party, note?: string, meant?: CapabilityRecord } = {}
  ): Vector => {
    const check: VectorCheck = { kind: 'capability-record', key: capabilityKeyText((opts.key ?? bob).peerId) }
    // `meant`: the record the bytes encode, where our codec cannot say (yet)
    const decoded =
      opts.meant == null
        ? envelopeMeaning(bytes, CapabilityRecord)
        : { ...(envelopeMeaning(bytes) as object), payload: meaning(opts.meant) }
    const init = { name, type: 'SignedEnvelope', payloadType: 'CapabilityRecord', check, bytes, decoded, ...(opts.note == null ? {} : { note: opts.note }) }
    return outcome === 'accept' ? accept(init) : reject({ ...init, stage: outcome[1] }, outcome[0])
  }
  const sealed = (r: CapabilityRecord, signer = bob): Uint8Array =>
    seal(signer, DOMAIN.capability, CapabilityRecord.encode(r))
  const vectors = [
    v('valid-unpacked-tiers', sealed(record(bob)), 'accept', { note: 'accepted_tiers as one tag per element (what protons writes)' }),
    v('valid-packed-tiers', seal(bob, DOMAIN.capability, packedTiers(record(bob))), 'accept', { meant: record(bob), note: 'accepted_tiers packed (what every standard proto3 encoder writes): must be accepted, meaning the same record as valid-unpacked-tiers' }),
    v('empty-accepted-tiers', sealed(record(bob, { acceptedTiers: [] })), ['bad-field', 'rule'], { note: 'a provider accepting no tier offers nothing: refused by the field rules (not by decoding)' }),
    v('expired', sealed(record(bob, { issuedAt: BigInt(NOW - 3_600_000), expiresAt: BigInt(NOW - 1) })), ['expired', 'rule']),
    v('from-the-future', sealed(record(bob, { issuedAt: BigInt(NOW + 31_000), expiresAt: BigInt(NOW + 3_600_000) })), ['from-future', 'rule']),
    v('lifetime-over-2h', sealed(record(bob, { expiresAt: BigInt(NOW - 60_000 + 2 * 3_600_000 + 1) })), ['lifetime-too-long', 'rule']),
    v('stored-under-another-key', sealed(record(bob)), ['wrong-signer', 'signer'], { key: carol, note: 'bob\'s valid record under carol\'s key' }),
    v('names-another-peer', sealed(record(carol)), ['peer-mismatch', 'rule'], { note: 'signed by bob, peer_id says carol' }),
    v('wrong-domain', seal(bob, DOMAIN.heartbeat, CapabilityRecord.encode(record(bob))), ['wrong-domain', 'domain']),
    v('oversized', seal(bob, DOMAIN.capability, Uint8Array.from([...CapabilityRecord.encode(record(bob)), ...unknownField(8300)])), ['oversized', 'size'])
  ]
  return file('capability records: DHT values under /idlegrid/cap/<peer id> as the kad-dht validator sees them', { bob: keyEntry(bob), carol: keyEntry(carol) }, vectors)
}

export async function makeJobFrames (): Promise<VectorFile> {
  const [alice, bob] = await Promise.all([party('alice'), party('bob')])
  const awardHash = sha256('award')
  const att = attestation(bob, alice, awardHash)
  const expect = { provider: bob.peerId.toString(), renter: alice.peerId.toString(), jobId: hex(JOB_ID), awardHash: hex(awardHash), inputDigest: hex(sha256('')), attestationHash: hex(att.hash) }
  const v = (name: string, frame: JobFrame | Uint8Array, outcome: Outcome, note?: string): Vector => {
    const bytes = frame instanceof Uint8Array ? frame : JobFrame.encode(frame)
    const init = { name, type: 'JobFrame', check: { kind: 'job-frame' as const, expect }, bytes, decoder: JobFrame, ...(note == null ? {} : { note }) }
    const { decoder, ...rest } = init
    return outcome === 'accept' ? accept(rest, decoder) : reject({ ...rest, stage: outcome[1] }, outcome[0], outcome[1] === 'decode' ? undefined : decoder)
  }
  const chunk = { path: 'inputs/a.txt', offset: 0n, data: new TextEncoder().encode('hello') }
  const vectors = [
    v('start', { start: { award: seal(alice, DOMAIN.award, new Uint8Array(0)), jobRequest: seal(alice, DOMAIN.jobRequest, new Uint8Array(0)), runtime: { image: '', command: ['python3', 'run.py'], env: [{ key: 'SEED', value: '1' }], timeoutMs: 60_000n, shmSizeMib: 0 }, inputs: [{ path: 'a.txt', size: 5n, sha256: sha256('hello') }] } }, 'accept', 'the frame decodes; the award and job request inside are judged by the Start checks'),
    v('start-public-input', { start: { award: seal(alice, DOMAIN.award, new Uint8Array(0)), jobRequest: seal(alice, DOMAIN.jobRequest, new Uint8Array(0)), runtime: { image: '', command: ['python3', 'train.py'], env: [], timeoutMs: 60_000n, shmSizeMib: 0 }, inputs: [{ path: 'weights.bin', size: 5n, sha256: sha256('hello'), public: true }] } }, 'accept', 'FileEntry.public (4): a provider\'s input cache may reuse this input for any renter naming its digest; not part of the set digest'),
    v('held', { held: { sha256: [sha256('hello')] } }, 'accept', 'job/1.1.0: the provider holds the manifest file of this digest in its input cache; the renter does not send it'),
    v('held-none', { held: { sha256: [] } }, 'accept', 'job/1.1.0: an empty Held (frame bytes 72 00): the provider holds nothing, the renter sends every input'),
    v('input-chunk', { inputChunk: chunk }, 'accept'),
    v('input-end-present-but-empty', { inputEnd: {} }, 'accept', 'an empty sub-message is sent present: the frame bytes are 1a 00'),
    v('accepted', { accepted: { at: BigInt(NOW) } }, 'accept'),
    v('log', { log: { stream: JobFrame.Log.Stream.STDERR, line: 'warming up', at: BigInt(NOW) } }, 'accept'),
    v('progress', { progress: { at: BigInt(NOW), elapsedMs: 5_000n } }, 'accept'),
    v('result', { result: { status: JobStatus.COMPLETED, exitCode: -1, outputs: [] } }, 'accept', 'exit_code is sint32 (zigzag)'),
    v('attestation', { attestation: att.envelope }, 'accept'),
    v('receipt', { receipt: receipt(alice, bob, att.hash) }, 'accept'),
    v('attestation-four-gpus', { attestation: attestation(bob, alice, awardHash, { gpus: [0, 1, 2, 3].map(i => ({ uuidHash: sha256(`GPU-0000000${i}-0000-0000-0000-000000000000`), driverVersion: '550.54', model: 'rtx-4090' })) }).envelope }, 'accept', 'a 4-GPU job: gpus (field 14) names every GPU, the first also in gpu (field 10) for readers from before gpus'),
    v('attestation-signed-by-renter', { attestation: attestation(alice, alice, awardHash).envelope }, ['signature', 'signer'], 'the attestation must be the winner\'s'),
    v('receipt-bad-signature', { receipt: receipt(alice, bob, att.hash, { latencyMs: 1n }).map((b, i, a) => i === a.length - 1 ? b ^ 1 : b) }, ['signature', 'signature']),
    v('no-member', new Uint8Array(0), ['PROTOCOL', 'decode'], 'an empty frame sets no member of the oneof'),
    v('two-members-last-wins', Uint8Array.from([...JobFrame.encode({ inputEnd: {} }), ...JobFrame.encode({ accepted: { at: 1n } })]), 'accept', 'input_end then accepted on the wire: protobuf parsing keeps the last oneof member seen, so this decodes as Accepted alone (several members cannot be seen after decoding)'),
    v('member-order-decides-not-number', Uint8Array.from([...JobFrame.encode({ accepted: { at: 1n } }), ...JobFrame.encode({ inputEnd: {} })]), 'accept', 'accepted (member 4) then input_end (member 3): the last member seen wins whatever its field number, so this is InputEnd alone (a decoder keeping the highest-numbered member would see Accepted)'),
    v('start-sent-twice-merged', Uint8Array.from([...JobFrame.encode({ start: { award: seal(alice, DOMAIN.award, new Uint8Array(0)), jobRequest: new Uint8Array(0), runtime: { image: '', command: ['python3'], env: [], timeoutMs: 60_000n, shmSizeMib: 0 }, inputs: [] } }), ...new Writer().bytesField(1, new Writer().bytesField(3, new Writer().bytesField(2, Buffer.from('run.py')).bytes()).bytes()).bytes()]), 'accept', 'start (member 1) sent twice, the second holding only runtime.command = ["run.py"]: protobuf merges them, nested messages too, so this is one Start with the award and command ["python3", "run.py"]'),
    v('input-chunk-length-2^32-plus-n', Uint8Array.from([...new Writer().varint(BigInt((2 << 3) | 2)).varint(2n ** 32n + 9n).bytes(), ...new Writer().bytesField(1, Buffer.from('a.txt')).varintField(2, 0n).bytes()]), ['malformed', 'decode'], 'input_chunk\'s length prefix is 2^32 + its real length: read as uint32 it would be the real length; a length past the end of its message is malformed'),
    v('unknown-error-code', new Writer().bytesField(11, new Writer().varintField(1, 99n).bytes()).bytes(), ['malformed', 'decode'], 'Error.code 99: enums are closed')
  ]
  return file('job stream frames (/idlegrid/job/1.0.0 and 1.1.0), each judged on its own', { alice: keyEntry(alice), bob: keyEntry(bob) }, vectors)
}

function file (description: string, keys: VectorFile['keys'], vectors: Vector[]): VectorFile {
  return { format: VECTOR_FORMAT, description, now: NOW, signingPrefix: SIGNING_PREFIX, keys, vectors }
}
