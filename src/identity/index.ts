/**
 * The node's identity: its one ed25519 key (peer id = signing key), signed envelopes and the
 * Signed<T> shape every room opens them into. Tests reach the signature primitives through
 * the module files (signature.ts, envelope.ts, keystore.ts).
 */
export { loadOrCreateKey } from './keystore.js'
export { IdentityError, isEnvelopeError } from './errors.js'
export type { EnvelopeRejection } from './errors.js'
export { sealEnvelope, openEnvelope, openEnvelopeAsync, openEnvelopeUnverified, verifyOpenedAsync, badSignature } from './envelope.js'
export type { OpenedEnvelope } from './envelope.js'
export { messageHash, sha256 } from './hash.js'
export { sealSigned, openSigned } from './signed.js'
export type { Signed } from './signed.js'
export { signDetached, verifyDetached } from './detached.js'
export { setVerifierThreads } from './signature.js'
export { MAX_VERIFIER_THREADS } from './verify-pool.js'
