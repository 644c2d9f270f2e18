/**
 * The one shape of a signed idlegrid message once it is sealed or opened: the decoded
 * payload, its verified signer, its message hash and the envelope bytes exactly as signed.
 * Every room (market messages, attestations and receipts, capability records, ledger
 * entries) uses it, so `message` always means the decoded payload and `envelope` the bytes.
 */
import { messageHash } from './hash.js'
import { openEnvelope, sealEnvelope, type OpenOptions } from './envelope.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

export interface Signed<T> {
  /** the decoded payload */
  message: T
  /** the verified signer (an Ed25519 peer id) */
  signer: PeerId
  /** message hash (protocols/README.md §4): replay id and what other messages point at */
  hash: Uint8Array
  /** the SignedEnvelope bytes exactly as signed: store, embed or forward these */
  envelope: Uint8Array
}

/** Encodes and signs `message` under `domain`, as `signer` (its key and peer id). */
export function sealSigned<T> (
  { key, peerId: signer }: { key: Ed25519PrivateKey, peerId: PeerId },
  domain: string,
  encode: (message: T) => Uint8Array,
  message: T
): Signed<T> {
  const payload = encode(message)
  const envelope = sealEnvelope(key, signer, domain, payload)
  return { message, signer, hash: messageHash(domain, payload), envelope }
}

/**
 * Opens untrusted envelope bytes (IdentityError ERR_ENVELOPE on any problem) and decodes the verified
 * payload with `decode`, which must bound its input; its errors pass through unchanged.
 */
export function openSigned<T> (
  bytes: Uint8Array,
  opts: OpenOptions & { decode: (payload: Uint8Array) => T }
): Signed<T> {
  const opened = openEnvelope(bytes, opts)
  return {
    message: opts.decode(opened.payload),
    signer: opened.signer,
    hash: messageHash(opened.domain, opened.payload),
    envelope: bytes
  }
}
