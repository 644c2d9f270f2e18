/**
 * envelopes.json: SignedEnvelope rules (protocols/README.md §3) on one Heartbeat payload:
 * domain, signer, signature length, strict RFC 8032 (S < L, no small-order keys), size bound,
 * field order.
 */

import { createHash } from 'node:crypto'
import { SignedEnvelope } from '../../../protocols/envelope.js'
import { Heartbeat } from '../../../protocols/heartbeat.js'
import { DOMAIN, SIGNING_PREFIX, TOPIC, TOPIC_MAX_BYTES } from '../../../protocols/ids.js'
import { signingInput } from '../../../src/identity/envelope.js'
import { unknownField, Writer } from './writer.js'
import { accept, ed25519PeerIdBytes, envelopeMeaning, GROUP_ORDER, keyEntry, nonCanonicalS, NOW, opensslAccepts, party, peerIdText, reject, seal, tamper, type Party } from './build.js'
import { VECTOR_FORMAT, type Vector, type VectorFile } from './format.js'

/** Encodings of two small-order points: the identity (y = 1) and a point of order 8. */
const IDENTITY_POINT = '01'.padEnd(64, '0')
const ORDER_8_POINT = '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05'

function smallOrderKey (encoding: string): { publicKey: string, peerId: string } {
  return { publicKey: encoding, peerId: peerIdText(ed25519PeerIdBytes(Uint8Array.from(Buffer.from(encoding, 'hex')))) }
}

const check = { kind: 'envelope' as const, domain: DOMAIN.heartbeat, maxBytes: TOPIC_MAX_BYTES[TOPIC.heartbeats] }
const base = { type: 'SignedEnvelope', payloadType: 'Heartbeat', check }

function heartbeat (seq: bigint): Uint8Array {
  return Heartbeat.encode({
    role: Heartbeat.Role.PROVIDER,
    seq,
    sentAt: BigInt(NOW),
    expiresAt: BigInt(NOW + 60_000),
    slotsTotal: 1,
    slotsBusy: 0
  })
}

function vector (name: string, bytes: Uint8Array, verdict: 'accept' | [reason: string, stage: Vector['stage']], note?: string): Vector {
  const init = { name, ...base, bytes, decoded: envelopeMeaning(bytes, Heartbeat), ...(note == null ? {} : { note }) }
  return verdict === 'accept' ? accept(init) : reject({ ...init, stage: verdict[1] }, verdict[0])
}

/**
 * The small-order key vectors: R = identity, S = 0 and [k]A = identity, which the plain
 * verification equation accepts.
 */
function smallOrder (encoding: string, order: number): { bytes: Uint8Array, openssl: boolean } {
  const A = Uint8Array.from(Buffer.from(encoding, 'hex'))
  const R = Uint8Array.from(Buffer.from('01'.padEnd(64, '0'), 'hex'))
  const signature = Uint8Array.from([...R, ...new Uint8Array(32)])
  // pick a payload whose challenge k is a multiple of A's order, so [k]A is the identity
  for (let seq = 1n; ; seq++) {
    const payload = heartbeat(seq)
    const input = signingInput(DOMAIN.heartbeat, payload)
    const k = BigInt('0x' + Buffer.from(createHash('sha512').update(R).update(A).update(input).digest().reverse()).toString('hex')) % GROUP_ORDER
    if (k % BigInt(order) !== 0n) continue
    const bytes = SignedEnvelope.encode({ domain: DOMAIN.heartbeat, signer: ed25519PeerIdBytes(A), payload, signature })
    return { bytes, openssl: opensslAccepts(A, input, signature) }
  }
}

export async function makeEnvelopes (): Promise<VectorFile> {
  const alice = await party('alice')
  const valid = seal(alice, DOMAIN.heartbeat, heartbeat(1n))
  const env = SignedEnvelope.decode(valid)
  const flipped = Uint8Array.from(env.signature)
  flipped[0] ^= 1
  const reordered = reorderedEnvelope(alice)
  const identity = smallOrder(IDENTITY_POINT, 1)
  const order8 = smallOrder(ORDER_8_POINT, 8)
  // secp256k1 generator point, compressed: a well-formed key of another type
  const secpSigner = Uint8Array.from([0x00, 0x25, 0x08, 0x02, 0x12, 0x21, ...Buffer.from('0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798', 'hex')])
  const vectors: Vector[] = [
    vector('valid', valid, 'accept'),
    vector('fields-reversed-and-defaults-explicit', reordered, 'accept', 'envelope fields in descending order and the payload with every default written out: any valid encoding is accepted; the signature covers the payload bytes as sent'),
    vector('bad-signature', tamper(valid, { signature: flipped }), ['bad-signature', 'signature'], 'one bit of R flipped'),
    vector('payload-changed-after-signing', tamper(valid, { payload: heartbeat(2n) }), ['bad-signature', 'signature']),
    vector('wrong-domain', seal(alice, DOMAIN.bid, heartbeat(1n)), ['wrong-domain', 'domain'], 'a heartbeat signed for domain "bid", opened where "heartbeat" is expected'),
    vector('signed-for-another-domain', seal(alice, DOMAIN.heartbeat, heartbeat(1n), { signedDomain: DOMAIN.bid }), ['bad-signature', 'signature'], 'domain field says heartbeat, the signature covers "idlegrid/v1/bid"'),
    vector('signed-without-prefix', seal(alice, DOMAIN.heartbeat, heartbeat(1n), { prefix: '' }), ['bad-signature', 'signature'], 'signature over domain || 0x00 || payload without "idlegrid/v1/"'),
    vector('non-canonical-s', tamper(valid, { signature: nonCanonicalS(env.signature) }), ['bad-signature', 'signature'], 'S + L in place of S: the same signature under the cofactorless equation, refused by the strict rule S < L (OpenSSL refuses it too)'),
    vector('small-order-key-identity', identity.bytes, ['bad-signature', 'signature'], `public key = the identity point (order 1), R = identity, S = 0: satisfies [S]B = R + [k]A; OpenSSL alone ${identity.openssl ? 'ACCEPTS' : 'refuses'} it, the strict rule refuses small-order keys`),
    vector('small-order-key-order-8', order8.bytes, ['bad-signature', 'signature'], `public key of order 8, payload chosen so 8 | k: satisfies [S]B = R + [k]A; OpenSSL alone ${order8.openssl ? 'ACCEPTS' : 'refuses'} it, the strict rule refuses small-order keys`),
    vector('signature-63-bytes', tamper(valid, { signature: env.signature.subarray(0, 63) }), ['bad-signature', 'signature']),
    vector('signer-secp256k1', tamper(valid, { signer: secpSigner }), ['bad-signer', 'signer'], 'a valid secp256k1 peer id: only Ed25519 peer ids sign'),
    vector('signer-not-a-peer-id', tamper(valid, { signer: Uint8Array.from([0x12, 0x20, ...new Uint8Array(32)]) }), ['bad-signer', 'signer'], 'a sha2-256 multihash: the public key cannot be taken from it'),
    vector('signer-missing', tamper(valid, { signer: new Uint8Array(0) }), ['bad-signer', 'signer']),
    vector('oversized', seal(alice, DOMAIN.heartbeat, Uint8Array.from([...heartbeat(1n), ...unknownField(2100)])), ['oversized', 'size'], `over the ${check.maxBytes}-byte bound (an unknown field pads the payload); refused before decoding`),
    vector('truncated', valid.subarray(0, valid.length - 10), ['malformed', 'decode']),
    vector('payload-length-2^32-plus-n', lyingLength(alice), ['malformed', 'decode'], 'the payload\'s length prefix is 2^32 + its real length (a 5-byte varint) and the signature is valid over the real payload: a decoder reading lengths as uint32 (protons, protobufjs 7) takes it for the real length and accepts; a length past the end of its message is malformed')
  ]
  return {
    format: VECTOR_FORMAT,
    description: 'SignedEnvelope (protocols/README.md §3), opened for domain "heartbeat" with the heartbeats topic bound',
    now: NOW,
    signingPrefix: SIGNING_PREFIX,
    keys: { alice: keyEntry(alice), 'small-order-identity': smallOrderKey(IDENTITY_POINT), 'small-order-8': smallOrderKey(ORDER_8_POINT) },
    vectors
  }
}

/** A valid envelope whose payload length prefix reads 2^32 + length. */
function lyingLength (p: Party): Uint8Array {
  const payload = heartbeat(30n)
  const env = SignedEnvelope.decode(seal(p, DOMAIN.heartbeat, payload))
  const w = new Writer().bytesField(1, Buffer.from(env.domain)).bytesField(2, env.signer)
  w.varint(BigInt((3 << 3) | 2)).varint(2n ** 32n + BigInt(payload.length))
  return Uint8Array.from([...w.bytes(), ...payload, ...new Writer().bytesField(4, env.signature).bytes()])
}

/** Fields 4, 3, 2, 1 and a payload with explicit zero fields, written by hand. */
function reorderedEnvelope (p: Party): Uint8Array {
  // Heartbeat{slots_busy=0 (explicit), slots_total=1, expires_at, sent_at, seq=7, role=PROVIDER} in descending order
  const w = new Writer()
  w.varintField(6, 0n)
    .varintField(5, 1n)
    .varintField(4, BigInt(NOW + 60_000))
    .varintField(3, BigInt(NOW))
    .varintField(2, 7n)
    .varintField(1, 2n)
  const payload = w.bytes()
  const signature = SignedEnvelope.decode(seal(p, DOMAIN.heartbeat, payload)).signature
  return new Writer()
    .bytesField(4, signature)
    .bytesField(3, payload)
    .bytesField(2, p.id)
    .bytesField(1, Buffer.from(DOMAIN.heartbeat))
    .bytes()
}
