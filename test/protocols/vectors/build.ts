/**
 * Helpers the vector generator shares: fixed keys from fixed seeds, envelopes signed for any
 * domain (valid or deliberately broken), and a vector's decoded meaning through our codecs.
 */

import { createHash, verify as cryptoVerify, createPublicKey } from 'node:crypto'
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { base58btc } from 'multiformats/bases/base58'
import { SignedEnvelope } from '../../../protocols/envelope.js'
import { SIGNING_PREFIX } from '../../../protocols/ids.js'
import { normalise, shapeOf } from '../../../protocols/normalise.js'
import { signingInput } from '../../../src/identity/envelope.js'
import { signBytes } from '../../../src/identity/signature.js'
import { hex, meaning, type Vector, type VectorKey } from './format.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

/** The receiver's clock in every file: 2026-01-01T00:00:00Z. */
export const NOW = Date.UTC(2026, 0, 1)

/** Ed25519's group order L. */
export const GROUP_ORDER = 2n ** 252n + 27742317777372353535851937790883648493n

export interface Party {
  name: string
  seed: Uint8Array
  key: Ed25519PrivateKey
  peerId: PeerId
  /** peer id bytes (identity multihash of the protobuf public key) */
  id: Uint8Array
}

/** A key from the fixed seed sha256("idlegrid-vectors/" + name). */
export async function party (name: string): Promise<Party> {
  const seed = new Uint8Array(createHash('sha256').update(`idlegrid-vectors/${name}`).digest())
  const key = await generateKeyPairFromSeed('Ed25519', seed)
  const peerId = peerIdFromPrivateKey(key)
  return { name, seed, key, peerId, id: peerId.toMultihash().bytes }
}

export function keyEntry (p: Party): VectorKey {
  return { seed: hex(p.seed), publicKey: hex(p.key.publicKey.raw), peerId: p.peerId.toString() }
}

/** Peer id bytes of a raw Ed25519 public key: identity multihash of the protobuf PublicKey{Type=Ed25519, Data}. */
export function ed25519PeerIdBytes (publicKey: Uint8Array): Uint8Array {
  return Uint8Array.from([0x00, 0x24, 0x08, 0x01, 0x12, 0x20, ...publicKey])
}

export function peerIdText (idBytes: Uint8Array): string {
  return base58btc.encode(idBytes).slice(1)
}

/** An envelope signed by `p` for `domain` over `payload`; `signedPayload` signs other bytes than those sent. */
export function seal (
  p: Party,
  domain: string,
  payload: Uint8Array,
  opts: { signedDomain?: string, signedPayload?: Uint8Array, prefix?: string } = {}
): Uint8Array {
  const prefix = opts.prefix ?? SIGNING_PREFIX
  const input = prefix === SIGNING_PREFIX
    ? signingInput(opts.signedDomain ?? domain, opts.signedPayload ?? payload)
    : Uint8Array.from([...Buffer.from(prefix + (opts.signedDomain ?? domain)), 0, ...(opts.signedPayload ?? payload)])
  const signature = signBytes(p.seed, input)
  return SignedEnvelope.encode({ domain, signer: p.id, payload, signature })
}

/** The same envelope with its fields replaced (signature, signer…), not re-signed. */
export function tamper (envelope: Uint8Array, change: Partial<SignedEnvelope>): Uint8Array {
  return SignedEnvelope.encode({ ...SignedEnvelope.decode(envelope), ...change })
}

/** S + L: the same signature with a non-canonical S (still < 2^256). */
export function nonCanonicalS (signature: Uint8Array): Uint8Array {
  let s = 0n
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(signature[i])
  s += GROUP_ORDER
  const out = Uint8Array.from(signature)
  for (let i = 32; i < 64; i++) { out[i] = Number(s & 0xffn); s >>= 8n }
  return out
}

/** Whether OpenSSL (node:crypto) alone accepts a signature: documents where the strict rule goes further. */
export function opensslAccepts (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' })
    return cryptoVerify(null, message, key, signature)
  } catch {
    return false
  }
}

export interface Decoder { decode: (bytes: Uint8Array) => unknown }

/** protons' decode of what the bytes mean (normalise.ts: packed runs, repeated message fields, lengths). */
function decodeNormalised<T> (codec: { decode: (bytes: Uint8Array) => T }, bytes: Uint8Array): T {
  return codec.decode(normalise(bytes, shapeOf(codec)))
}

/** Decoded meaning of bytes of `codec`, or null when they do not decode. */
export function decodedWith (codec: Decoder, bytes: Uint8Array): unknown {
  try {
    return meaning(decodeNormalised(codec, bytes))
  } catch {
    return null
  }
}

/** Decoded meaning of an envelope: its fields, with the payload decoded by `payload` (null when it does not decode). */
export function envelopeMeaning (bytes: Uint8Array, payload?: Decoder): unknown {
  let env: SignedEnvelope
  try {
    env = decodeNormalised(SignedEnvelope, bytes)
  } catch {
    return null
  }
  return {
    domain: env.domain,
    signer: hex(env.signer),
    payload: payload == null ? hex(env.payload) : decodedWith(payload, env.payload),
    signature: hex(env.signature)
  }
}

type VectorInit = Omit<Vector, 'hex' | 'decoded' | 'verdict' | 'reason'> & { bytes: Uint8Array, decoded?: unknown }

export function accept (init: VectorInit, decoder?: Decoder): Vector {
  return finish(init, 'accept', 'ok', decoder)
}

export function reject (init: VectorInit, reason: string, decoder?: Decoder): Vector {
  return finish(init, 'reject', reason, decoder)
}

function finish ({ bytes, decoded, ...rest }: VectorInit, verdict: 'accept' | 'reject', reason: string, decoder?: Decoder): Vector {
  return {
    ...rest,
    hex: hex(bytes),
    decoded: decoded ?? (decoder == null ? null : decodedWith(decoder, bytes)),
    verdict,
    reason
  }
}
