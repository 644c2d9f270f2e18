/**
 * The node's identity: its one ed25519 key (peer id = signing key), signed envelopes and the
 * Signed<T> shape every room opens them into. Tests reach the signature primitives through
 * the module files (signature.ts, envelope.ts, keystore.ts).
 */
export { loadOrCreateKey, DataDirError } from './keystore.js'
export { sealEnvelope, openEnvelope, openEnvelopeAsync, openEnvelopeUnverified, verifyOpenedAsync, badSignature, EnvelopeError } from './envelope.js'
export type { OpenedEnvelope, EnvelopeRejection } from './envelope.js'
export { messageHash, sha256 } from './hash.js'
export { sealSigned, openSigned } from './signed.js'
export type { Signed } from './signed.js'
export { signDetached, verifyDetached } from './detached.js'
