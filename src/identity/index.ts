export { loadOrCreateKey, ensureDataDir, KeyFileError, KEY_FILE } from './keystore.js'
export { sealEnvelope, openEnvelope, signingInput, EnvelopeError, MAX_ENVELOPE_BYTES } from './envelope.js'
export type { OpenedEnvelope, OpenOptions, EnvelopeRejection } from './envelope.js'
export { signBytes, verifyBytes } from './signature.js'
