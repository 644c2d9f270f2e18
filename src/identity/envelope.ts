import { peerIdFromMultihash } from '@libp2p/peer-id'
import * as Digest from 'multiformats/hashes/digest'
import { concat } from 'uint8arrays/concat'
import { fromString } from 'uint8arrays/from-string'
import { decodeBounded } from '../../protocols/codec.js'
import { SignedEnvelope } from '../../protocols/envelope.js'
import { SIGNING_PREFIX } from '../../protocols/ids.js'
import { BytesKeyedCache } from '../common/index.js'
import { envelopeError, type EnvelopeRefusal } from './errors.js'
import { signBytes, verifyNativeSync, verifyPrefixedInPool, SIGNATURE_BYTES } from './signature.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'
import type { Uint8ArrayList } from 'uint8arraylist'

/** Default bound on an encoded envelope; protocols pass tighter ones. */
export const MAX_ENVELOPE_BYTES = 64 * 1024
const MAX_DOMAIN_CHARS = 64
const MAX_SIGNER_BYTES = 64

export interface OpenedEnvelope {
  domain: string
  signer: PeerId
  /** the inner message bytes exactly as signed: decode these, never re-encode them */
  payload: Uint8Array
  signature: Uint8Array
}

export interface OpenOptions {
  /** the only domain accepted */
  domain: string
  /** bound on the encoded envelope, checked before decoding (default 64 KiB) */
  maxBytes?: number
  /** when set, the envelope must be signed by this peer */
  signer?: PeerId
}

/** The exact bytes an envelope's signature covers. */
export function signingInput (domain: string, payload: Uint8Array): Uint8Array {
  const prefix = signingPrefix(domain)
  const out = new Uint8Array(prefix.length + payload.length)
  out.set(prefix)
  out.set(payload, prefix.length)
  return out
}

/** SIGNING_PREFIX + domain + 0x00 as bytes, per domain: every signature and message hash starts with it. */
export function signingPrefix (domain: string): Uint8Array {
  let prefix = PREFIXES.get(domain)
  if (prefix == null) {
    prefix = concat([fromString(SIGNING_PREFIX + domain), Uint8Array.of(0)])
    // a few fixed domains in practice; an unknown one is encoded each time rather than kept
    if (PREFIXES.size < MAX_CACHED_PREFIXES) PREFIXES.set(domain, prefix)
  }
  return prefix
}

const PREFIXES = new Map<string, Uint8Array>()
const MAX_CACHED_PREFIXES = 64

/** Signs `payload` under `domain` with the node key and returns the encoded envelope. */
export function sealEnvelope (key: Ed25519PrivateKey, signer: PeerId, domain: string, payload: Uint8Array): Uint8Array {
  checkDomain(domain)
  const signature = signBytes(key.raw, signingInput(domain, payload))
  return SignedEnvelope.encode({ domain, signer: signer.toMultihash().bytes, payload, signature })
}

/**
 * Decodes and verifies an envelope from untrusted bytes: size first, then structure, domain,
 * signer (an Ed25519 peer id, whose public key is inside it) and signature. Throws
 * IdentityError ERR_ENVELOPE with the reason; returns the verified payload.
 */
export function openEnvelope (bytes: Uint8Array | Uint8ArrayList, opts: OpenOptions): OpenedEnvelope {
  const opened = decodeEnvelope(bytes, opts)
  if (!verifyNativeSync(opened.signer.publicKey.raw, signingInput(opened.domain, opened.payload), opened.signature)) {
    throw badSignature(opened)
  }
  return opened
}

/**
 * openEnvelope with the signature checked by the fast verifier (in batches on worker threads,
 * the same strict rule), so many envelopes verify at once: the ledger opens thousands while
 * syncing. The same checks, in the same order, with the same errors.
 */
export async function openEnvelopeAsync (
  bytes: Uint8Array | Uint8ArrayList,
  opts: OpenOptions
): Promise<OpenedEnvelope> {
  const opened = decodeEnvelope(bytes, opts)
  if (
    !(await verifyPrefixedInPool(
      opened.signer.publicKey.raw,
      signingPrefix(opened.domain),
      opened.payload,
      opened.signature
    ))
  ) {
    throw badSignature(opened)
  }
  return opened
}

/**
 * openEnvelope's checks but the signature's (size, structure, domain, signer, signature
 * length), synchronously: for a caller that verifies the signature itself with
 * verifyOpenedAsync, beside other work. Throws IdentityError ERR_ENVELOPE.
 */
export function openEnvelopeUnverified (bytes: Uint8Array | Uint8ArrayList, opts: OpenOptions): OpenedEnvelope {
  return decodeEnvelope(bytes, opts)
}

/** The signature check of an envelope opened unverified, by the fast verifier (verifyPrefixedInPool). */
export function verifyOpenedAsync (opened: OpenedEnvelope): Promise<boolean> {
  const publicKey = opened.signer.publicKey?.raw
  if (publicKey == null) return Promise.resolve(false)
  return verifyPrefixedInPool(publicKey, signingPrefix(opened.domain), opened.payload, opened.signature)
}

/** Every check but the signature's: size, structure, domain, signer, signature length. */
function decodeEnvelope (
  bytes: Uint8Array | Uint8ArrayList,
  opts: OpenOptions
): OpenedEnvelope & { signer: Ed25519PeerId } {
  const maxBytes = opts.maxBytes ?? MAX_ENVELOPE_BYTES
  if (bytes.byteLength > maxBytes) {
    throw envelopeError('oversized', `envelope of ${bytes.byteLength} bytes exceeds the ${maxBytes}-byte bound`)
  }
  let envelope: SignedEnvelope
  try {
    // decodeBounded, not SignedEnvelope.decode: protons alone reads a length of 2^32 + n as n
    envelope = decodeBounded(SignedEnvelope, bytes, 'envelope', maxBytes)
  } catch (err: any) {
    throw envelopeError('malformed', String(err?.message ?? err))
  }
  if (envelope.domain !== opts.domain) {
    throw envelopeError('wrong-domain', `envelope signed for domain "${envelope.domain.slice(0, MAX_DOMAIN_CHARS)}", expected "${opts.domain}"`)
  }
  const signer = decodeSigner(envelope.signer)
  if (opts.signer != null && !opts.signer.equals(signer)) {
    throw envelopeError('wrong-signer', `envelope signed by ${signer.toString()}, expected ${opts.signer.toString()}`)
  }
  if (envelope.signature.length !== SIGNATURE_BYTES) {
    throw envelopeError('bad-signature', `signature is ${envelope.signature.length} bytes, expected ${SIGNATURE_BYTES}`)
  }
  return { domain: envelope.domain, signer, payload: envelope.payload, signature: envelope.signature }
}

/** The rejection of an envelope whose signature does not verify, for callers that check it themselves. */
export function badSignature (opened: OpenedEnvelope): EnvelopeRefusal {
  return envelopeError('bad-signature', `signature by ${opened.signer.toString()} does not verify`)
}

type Ed25519PeerId = PeerId & { type: 'Ed25519', publicKey: { raw: Uint8Array } }

/** Signers seen recently: the same few keys sign most envelopes, and decoding one costs more than the lookup. */
const SIGNER_CACHE_LIMIT = 10_000
const signers = new BytesKeyedCache<Ed25519PeerId>(SIGNER_CACHE_LIMIT)

function decodeSigner (bytes: Uint8Array): Ed25519PeerId {
  if (bytes.length === 0 || bytes.length > MAX_SIGNER_BYTES) {
    throw envelopeError('bad-signer', `signer field of ${bytes.length} bytes is not an Ed25519 peer id`)
  }
  const cached = signers.get(bytes)
  if (cached != null) return cached
  let peerId: PeerId
  try {
    peerId = peerIdFromMultihash(Digest.decode(bytes))
  } catch {
    throw envelopeError('bad-signer', 'signer field is not a peer id')
  }
  if (peerId.type !== 'Ed25519') {
    throw envelopeError('bad-signer', `signer is a ${peerId.type} peer id; only Ed25519 peer ids can sign`)
  }
  signers.set(bytes, peerId as Ed25519PeerId)
  return peerId as Ed25519PeerId
}

function checkDomain (domain: string): void {
  if (domain === '' || domain.length > MAX_DOMAIN_CHARS || domain.includes('\0')) {
    throw envelopeError('wrong-domain', `invalid signing domain "${domain}"`)
  }
}
