/**
 * Small helpers with no domain knowledge that several rooms need: hex text, short peer ids
 * for people, abortable sleeps and bounded waits, the coded error every room's error class
 * extends. Nothing here knows about the market, jobs or the ledger; anything that does
 * belongs in its own room.
 */
export { toHex } from './hex.js'
export { shortPeerId } from './peer-text.js'
export { sleep, waitUntil, TimeoutError } from './time.js'
export { CodedError, isCoded, SERVICE_STOPPED } from './errors.js'
export { isLoopbackHost } from './loopback.js'
export { BytesKeyedCache } from './bytes-cache.js'
