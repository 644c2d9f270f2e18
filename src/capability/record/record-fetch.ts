/**
 * `/idlegrid/cap/1.0.0` (protocols/README.md §6): a provider hands its own signed capability
 * record to whoever asks, so a renter that found it under an index key gets the record in one
 * round trip instead of a DHT walk per provider. The answer is untrusted like any DHT value:
 * bounded before it is read, then opened by the same rules (signature, signer = the peer we
 * asked = record.peer_id, expiry, fields). Failures are CapabilityErrors (ERR_CAPABILITY_FETCH) with a reason.
 */

import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { PROTOCOL } from '../../../protocols/ids.js'
import { isRequestFailure, requestOnce, serveOnce } from '../../node/index.js'
import { fetchFailed, isRecordRejection, type RecordFetchError } from '../errors.js'
import { MAX_RECORD_VALUE_BYTES, openCapabilityRecord } from './record.js'
import type { CapabilityRecord } from '../../../protocols/capability.js'
import type { Signed } from '../../identity/index.js'
import type { Logger, PeerId } from '@libp2p/interface'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'

/** The request is an empty frame (later versions may add fields): anything longer is refused. */
export const MAX_FETCH_REQUEST_BYTES = 64
/** Time a provider gives one request. */
const SERVE_TIMEOUT_MS = 5_000
/** Addresses tried for one provider: findProviders answers are untrusted and could list many. */
export const MAX_DIAL_ADDRS = 8

/** Serves the provider's current record envelope (`current()` re-signs before expiry). */
export async function serveCapabilityRecord (
  registrar: Registrar,
  current: () => Uint8Array,
  log: Logger
): Promise<void> {
  await serveOnce(registrar, PROTOCOL.capability, async () => current(), {
    maxRequestBytes: MAX_FETCH_REQUEST_BYTES,
    timeoutMs: SERVE_TIMEOUT_MS,
    log
  })
}

/**
 * Addresses to dial `peer` at, from untrusted lists: parseable, at most MAX_DIAL_ADDRS, each
 * ending in /p2p/<peer> (the handshake then proves the identity); others are dropped.
 */
export function dialAddrsFor (peer: PeerId, addrs: Array<Multiaddr | Uint8Array | string>): Multiaddr[] {
  const out: Multiaddr[] = []
  const id = peer.toString()
  for (const a of addrs) {
    if (out.length >= MAX_DIAL_ADDRS) break
    try {
      const ma = multiaddr(a)
      const named = ma.getPeerId()
      if (named != null && named !== id) continue
      out.push(named != null ? ma : ma.encapsulate(`/p2p/${id}`))
    } catch {}
  }
  return out
}

export interface DirectFetchOptions {
  /** where to reach the provider when not connected (from findProviders or a cached record) */
  addrs?: Multiaddr[]
  signal: AbortSignal
  /** the local clock (default Date.now()) */
  now?: number
}

/** Asks `peer` for its record and opens it; throws CapabilityError ERR_CAPABILITY_FETCH. */
export async function fetchRecordDirect (
  connectionManager: ConnectionManager,
  peer: PeerId,
  opts: DirectFetchOptions
): Promise<Signed<CapabilityRecord>> {
  let value: Uint8Array
  try {
    value = await requestOnce(connectionManager, peer, {
      protocol: PROTOCOL.capability,
      request: new Uint8Array(0),
      maxResponseBytes: MAX_RECORD_VALUE_BYTES,
      signal: opts.signal,
      dial: opts.addrs
    })
  } catch (err) {
    throw asFetchError(err, peer)
  }
  try {
    return openCapabilityRecord(value, { peerId: peer, now: opts.now })
  } catch (err) {
    if (isRecordRejection(err)) throw fetchFailed(err.reason, `${peer.toString()} answered with an unusable record: ${err.message}`, { cause: err })
    throw err
  }
}

function asFetchError (err: unknown, peer: PeerId): RecordFetchError {
  if (!isRequestFailure(err)) return fetchFailed('failed', `record fetch from ${peer.toString()} failed: ${String(err)}`, { cause: err })
  const cause = err.cause as { name?: string } | undefined
  // it-length-prefixed refuses a frame whose announced length exceeds the bound, unread
  if (cause?.name === 'InvalidDataLengthError') return fetchFailed('oversized', `${peer.toString()} announced a reply over the ${MAX_RECORD_VALUE_BYTES}-byte bound`, { cause: err })
  if (cause?.name === 'UnsupportedProtocolError') return fetchFailed('unsupported', `${peer.toString()} does not serve ${PROTOCOL.capability}`, { cause: err })
  if (err.reason === 'timeout') return fetchFailed('timeout', `${peer.toString()} did not answer ${PROTOCOL.capability} in time`, { cause: err })
  if (err.reason === 'no-response') return fetchFailed('no-response', err.message, { cause: err })
  return fetchFailed('failed', err.message, { cause: err })
}
