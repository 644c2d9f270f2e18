/**
 * gossip.json: every gossip topic's messages as its topic validator sees them (protocols/README.md
 * §2, §9), fed in file order to one node, so a replay is the second of a pair.
 */

import { Heartbeat } from '../../../protocols/heartbeat.js'
import { DOMAIN, jobShardTopic, SIGNING_PREFIX, TOPIC, TOPIC_MAX_BYTES } from '../../../protocols/ids.js'
import { LedgerEntry } from '../../../protocols/ledger.js'
import { JobRequest } from '../../../protocols/market.js'
import { accept, envelopeMeaning, keyEntry, NOW, party, reject, seal, tamper, type Decoder, type Party } from './build.js'
import { VECTOR_FORMAT, type Vector, type VectorFile, type VectorStage } from './format.js'
import { entry, jobRequest } from './messages.js'
import { unknownField, Writer } from './writer.js'

type Outcome = 'accept' | [reason: string, stage: VectorStage, gossip: 'ignore' | 'reject']

function gossip (topic: string, payloadType: string, decoder: Decoder, from?: Party) {
  return (name: string, bytes: Uint8Array, outcome: Outcome, note?: string): Vector => {
    const init = { name, type: 'SignedEnvelope', payloadType, check: { kind: 'gossip' as const, topic, ...(from == null ? {} : { from: from.peerId.toString() }) }, bytes, decoded: envelopeMeaning(bytes, decoder), ...(note == null ? {} : { note }) }
    if (outcome === 'accept') return accept({ ...init, gossip: 'accept' })
    return reject({ ...init, stage: outcome[1], gossip: outcome[2] }, outcome[0])
  }
}

function heartbeat (change: Partial<Heartbeat> = {}): Uint8Array {
  return Heartbeat.encode({
    role: Heartbeat.Role.PROVIDER,
    seq: 10n,
    sentAt: BigInt(NOW),
    expiresAt: BigInt(NOW + 60_000),
    slotsTotal: 1,
    slotsBusy: 0,
    ...change
  })
}

export async function makeGossip (): Promise<VectorFile> {
  const [alice, bob, mallory] = await Promise.all([party('alice'), party('bob'), party('mallory')])
  const hb = gossip(TOPIC.heartbeats, 'Heartbeat', Heartbeat)
  const hbFromMallory = gossip(TOPIC.heartbeats, 'Heartbeat', Heartbeat, mallory)
  const hbValid = seal(bob, DOMAIN.heartbeat, heartbeat())
  const hbOversized = seal(
    alice,
    DOMAIN.heartbeat,
    Uint8Array.from([...heartbeat({ seq: 22n }), ...unknownField(2100)])
  )
  // jobRequest(): residency eu, min_vram_mib 24 000 → the eu / 24 GB shard
  const job = gossip(jobShardTopic('eu', 24), 'JobRequest', JobRequest)
  const jobOnWrongShard = gossip(jobShardTopic('us', 80), 'JobRequest', JobRequest)
  const jobValid = seal(alice, DOMAIN.jobRequest, JobRequest.encode(jobRequest(alice)))
  const ledger = gossip(TOPIC.ledger, 'LedgerEntry', LedgerEntry)
  const first = entry(bob, { seq: 1, time: NOW - 60_000 })
  const vectors: Vector[] = [
    hb('heartbeat/valid', hbValid, 'accept'),
    hb('heartbeat/replayed', hbValid, ['replayed', 'rule', 'ignore'], 'the same bytes again: ignored, never accepted twice'),
    hb('heartbeat/higher-seq', seal(bob, DOMAIN.heartbeat, heartbeat({ seq: 11n })), 'accept'),
    hb('heartbeat/stale-seq', seal(bob, DOMAIN.heartbeat, heartbeat({ seq: 9n })), ['stale sequence', 'rule', 'ignore'], 'seq not above the last accepted from this signer'),
    hb('heartbeat/expired', seal(alice, DOMAIN.heartbeat, heartbeat({ sentAt: BigInt(NOW - 120_000), expiresAt: BigInt(NOW - 60_000) })), ['expired', 'rule', 'ignore']),
    hb('heartbeat/from-the-future', seal(alice, DOMAIN.heartbeat, heartbeat({ sentAt: BigInt(NOW + 31_000), expiresAt: BigInt(NOW + 90_000) })), ['heartbeat from the future', 'rule', 'ignore'], 'sent_at 31 s ahead of the receiver (bound 30 s)'),
    hb('heartbeat/lifetime-too-long', seal(alice, DOMAIN.heartbeat, heartbeat({ expiresAt: BigInt(NOW + 10 * 60_000 + 1) })), ['heartbeat lifetime too long', 'rule', 'reject']),
    hbFromMallory('heartbeat/relayed-by-another-sender', seal(alice, DOMAIN.heartbeat, heartbeat({ seq: 20n })), 'accept', 'delivered by mallory, signed by alice: a gossip message names no author of its own (StrictNoSign), the envelope\'s signer is its author'),
    hb('heartbeat/wrong-domain', seal(alice, DOMAIN.bid, heartbeat({ seq: 21n })), ['wrong-domain', 'domain', 'reject']),
    hb('heartbeat/bad-signature', tamper(hbValid, { payload: heartbeat({ seq: 12n }) }), ['bad-signature', 'signature', 'reject']),
    hb('heartbeat/oversized', hbOversized, [`oversized (${hbOversized.length} > ${TOPIC_MAX_BYTES[TOPIC.heartbeats]} bytes)`, 'size', 'reject'], 'an unknown field pads the payload; refused before decoding'),
    hb('heartbeat/payload-malformed', seal(alice, DOMAIN.heartbeat, Uint8Array.from([0x08, 0x07])), ['malformed heartbeat', 'decode', 'reject'], 'role = 7 is no Role: enums are closed'),
    job('job-request/valid', jobValid, 'accept'),
    job('job-request/replayed', jobValid, ['replayed', 'rule', 'ignore']),
    job('job-request/expired', seal(alice, DOMAIN.jobRequest, JobRequest.encode(jobRequest(alice, { jobId: new Uint8Array(16).fill(2), createdAt: BigInt(NOW - 6 * 60_000), expiresAt: BigInt(NOW - 1) }))), ['expired', 'rule', 'ignore']),
    job('job-request/from-the-future', seal(alice, DOMAIN.jobRequest, JobRequest.encode(jobRequest(alice, { createdAt: BigInt(NOW + 31_000), expiresAt: BigInt(NOW + 5 * 60_000) }))), ['from-the-future', 'rule', 'ignore']),
    job('job-request/constraints-sent-twice', seal(alice, DOMAIN.jobRequest, constraintsTwice(JobRequest.encode(jobRequest(alice, { jobId: new Uint8Array(16).fill(3) })))), 'accept', 'constraints (field 7) sent again with max_latency_ms = 250: protobuf merges the two, so the request keeps its first constraints and gains max_latency_ms (a decoder keeping only the last would lose them)'),
    job('job-request/names-another-renter', seal(alice, DOMAIN.jobRequest, JobRequest.encode(jobRequest(bob))), ['wrong-signer', 'rule', 'reject']),
    job('job-request/job-id-15-bytes', seal(alice, DOMAIN.jobRequest, JobRequest.encode(jobRequest(alice, { jobId: new Uint8Array(15) }))), ['malformed', 'rule', 'reject']),
    job('job-request/eight-gpus', seal(alice, DOMAIN.jobRequest, JobRequest.encode(jobRequest(alice, { jobId: new Uint8Array(16).fill(5), gpus: 8 }))), 'accept', 'gpus = 8 (field 16): eight GPUs on one box; a 1-GPU request leaves the field out'),
    job('job-request/seventeen-gpus', seal(alice, DOMAIN.jobRequest, JobRequest.encode(jobRequest(alice, { jobId: new Uint8Array(16).fill(6), gpus: 17 }))), ['too-many-gpus', 'rule', 'ignore'], 'gpus above 16 is ignored, not rejected: nodes from before the field relay it without being able to check it'),
    jobOnWrongShard('job-request/wrong-shard', seal(alice, DOMAIN.jobRequest, JobRequest.encode(jobRequest(alice, { jobId: new Uint8Array(16).fill(4) }))), ['wrong-shard', 'rule', 'reject'], 'a valid request (eu, 24 GB) on the us / 80 GB shard: each job belongs to exactly one shard'),
    ledger('ledger-entry/valid', first.envelope, 'accept'),
    ledger('ledger-entry/replayed', first.envelope, ['replayed', 'rule', 'ignore']),
    ledger('ledger-entry/from-the-future', entry(alice, { seq: 1, time: NOW + 31_000 }).envelope, ['ERR_LEDGER_FUTURE', 'rule', 'ignore']),
    ledger('ledger-entry/dated-before-predecessor', entry(bob, { seq: 2, prev: first.hash, time: NOW - 61_000 }).envelope, ['ERR_LEDGER_TIME_ORDER', 'rule', 'reject']),
    ledger('ledger-entry/second', entry(bob, { seq: 2, prev: first.hash, time: NOW - 30_000 }).envelope, 'accept')
  ]
  return {
    format: VECTOR_FORMAT,
    description: 'gossip messages on every topic, fed in this order to one node\'s topic validators (bids and awards travel on streams since version 2); `from` is the peer that delivered it, not an author: gossip messages carry none (StrictNoSign)',
    now: NOW,
    signingPrefix: SIGNING_PREFIX,
    keys: { alice: keyEntry(alice), bob: keyEntry(bob), mallory: keyEntry(mallory) },
    vectors
  }
}

/** A second constraints field after the request, setting only max_latency_ms (6). */
function constraintsTwice (request: Uint8Array): Uint8Array {
  return Uint8Array.from([...request, ...new Writer().bytesField(7, new Writer().varintField(6, 250n).bytes()).bytes()])
}
