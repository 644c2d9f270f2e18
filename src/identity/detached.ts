/**
 * Signatures without an envelope, for a message that two parties sign (a co-signed usage
 * statement): the same signing input as an envelope's, SIGNING_PREFIX + domain + 0x00 +
 * payload, so one rule covers every idlegrid signature (protocols/README.md §3).
 */
import { signingInput } from './envelope.js'
import { signBytes, verifyInPool } from './signature.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

export function signDetached (key: Ed25519PrivateKey, domain: string, payload: Uint8Array): Uint8Array {
  return signBytes(key.raw, signingInput(domain, payload))
}

/** Whether `signature` is `signer`'s over (domain, payload), strict RFC 8032 (fast verifier). */
export async function verifyDetached (
  signer: PeerId,
  domain: string,
  payload: Uint8Array,
  signature: Uint8Array
): Promise<boolean> {
  const publicKey = signer.publicKey?.raw
  if (publicKey == null) return false
  return await verifyInPool(publicKey, signingInput(domain, payload), signature)
}
