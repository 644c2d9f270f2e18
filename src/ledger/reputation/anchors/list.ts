/**
 * Trust lists (protocols/trust.proto, protocols/README.md §7 "Trust lists"): the peers a
 * network's operator vouches for, signed by the operator's key. Here: sealing one, and opening
 * one from untrusted bytes — size first, then the envelope and its signature, then the list's
 * fields, then whose key signed it and when — each refusal a LedgerError ERR_TRUST_LIST with its reason.
 */

import { peerIdFromMultihash } from '@libp2p/peer-id'
import * as Digest from 'multiformats/hashes/digest'
import { decodeBounded, envelopeMaxBytes, LIMITS, MAX_BYTES, MAX_CLOCK_SKEW_MS, MAX_LIFETIME_MS, WireDecodeError } from '../../../../protocols/codec.js'
import { DOMAIN } from '../../../../protocols/ids.js'
import { TrustList } from '../../../../protocols/trust.js'
import { isEnvelopeError, openEnvelope, sealEnvelope } from '../../../identity/index.js'
import { trustListRejected } from '../../errors.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

/** Most peers one list names. */
export const MAX_TRUST_LIST_PEERS = LIMITS.trustList.peers
/** Bound of a list's envelope bytes, checked before anything is decoded. */
export const MAX_TRUST_LIST_BYTES = envelopeMaxBytes(MAX_BYTES.trustList)
const MAX_NAME_CHARS = 64

export type TrustListRejection =
  /** more bytes than MAX_TRUST_LIST_BYTES, or more peers than MAX_TRUST_LIST_PEERS */
  | 'oversized'
  /** the envelope or the list does not decode, is signed for another domain, or a field breaks a rule */
  | 'malformed'
  /** the signature does not verify: a forged or altered list */
  | 'bad-signature'
  /** signed by a key this node was not told to accept */
  | 'operator-not-accepted'
  | 'expired'
  /** issued more than the clock-skew bound ahead of this node's clock */
  | 'not-yet-valid'
  /** expires more than MAX_LIFETIME_MS.trustList after it was issued */
  | 'too-long-lived'
  /** an older list (lower sequence) of an operator whose newer list this node holds */
  | 'superseded'

/** A list that opened: its fields, its operator and its envelope exactly as signed. */
export interface OpenedTrustList {
  operator: string
  name: string
  sequence: bigint
  issuedAt: number
  expiresAt: number
  /** the listed peers' ids, in the list's order */
  peers: string[]
  envelope: Uint8Array
}

export interface TrustListContent {
  name: string
  sequence: bigint
  issuedAt: number
  expiresAt: number
  peers: PeerId[]
}

/** Signs a trust list with the operator's key: the envelope a node adopts. */
export function sealTrustList (key: Ed25519PrivateKey, operator: PeerId, list: TrustListContent): Uint8Array {
  const payload = TrustList.encode({
    name: list.name,
    sequence: list.sequence,
    issuedAt: BigInt(list.issuedAt),
    expiresAt: BigInt(list.expiresAt),
    peers: list.peers.map(p => p.toMultihash().bytes)
  })
  return sealEnvelope(key, operator, DOMAIN.trustList, payload)
}

export interface OpenTrustListOptions {
  /** the operator keys (peer ids) whose lists this node adopts */
  operators: ReadonlySet<string>
  /** this node's clock, unix ms */
  now: number
}

/**
 * Opens a trust list from untrusted bytes: bounded, verified, signed by an accepted operator
 * and valid at `now`. Throws LedgerError ERR_TRUST_LIST, never anything else.
 */
export function openTrustList (bytes: Uint8Array, opts: OpenTrustListOptions): OpenedTrustList {
  const opened = openSigned(bytes)
  const operator = opened.signer.toString()
  const list = decodeList(opened.payload)
  const peers = checkFields(list)
  const issuedAt = Number(list.issuedAt)
  const expiresAt = Number(list.expiresAt)
  if (!opts.operators.has(operator)) {
    throw trustListRejected('operator-not-accepted', `trust list "${list.name}" is signed by ${operator}, not an operator key this node accepts (trust.operators, --trust-operator)`)
  }
  if (expiresAt - issuedAt > MAX_LIFETIME_MS.trustList) {
    throw trustListRejected('too-long-lived', `trust list "${list.name}" of ${operator} lives ${days(expiresAt - issuedAt)} days, more than the ${days(MAX_LIFETIME_MS.trustList)}-day bound`)
  }
  if (issuedAt > opts.now + MAX_CLOCK_SKEW_MS) {
    throw trustListRejected('not-yet-valid', `trust list "${list.name}" of ${operator} is issued at ${iso(issuedAt)}, ahead of this node's clock (${iso(opts.now)})`)
  }
  if (expiresAt <= opts.now) {
    throw trustListRejected('expired', `trust list "${list.name}" of ${operator} (sequence ${list.sequence}) expired at ${iso(expiresAt)}`)
  }
  return { operator, name: list.name, sequence: list.sequence, issuedAt, expiresAt, peers, envelope: bytes }
}

function openSigned (bytes: Uint8Array): ReturnType<typeof openEnvelope> {
  if (bytes.byteLength > MAX_TRUST_LIST_BYTES) {
    throw trustListRejected('oversized', `trust list of ${bytes.byteLength} bytes exceeds the ${MAX_TRUST_LIST_BYTES}-byte bound`)
  }
  try {
    return openEnvelope(bytes, { domain: DOMAIN.trustList, maxBytes: MAX_TRUST_LIST_BYTES })
  } catch (err) {
    if (isEnvelopeError(err) && err.reason === 'bad-signature') throw trustListRejected('bad-signature', `trust list: ${err.message} (forged or altered)`)
    throw trustListRejected('malformed', `trust list envelope: ${(err as Error).message}`)
  }
}

function decodeList (payload: Uint8Array): TrustList {
  try {
    return decodeBounded(TrustList, payload, 'trust list', MAX_BYTES.trustList, LIMITS.trustList)
  } catch (err) {
    const cause = (err as WireDecodeError).cause as Error | undefined
    if (err instanceof WireDecodeError && (err.reason === 'oversized' || cause?.name === 'MaxLengthError')) {
      throw trustListRejected('oversized', `trust list: more than ${MAX_TRUST_LIST_PEERS} peers or ${MAX_BYTES.trustList} bytes (${err.message})`)
    }
    throw trustListRejected('malformed', (err as Error).message)
  }
}

/** The fields' own rules; returns the listed peers' ids. */
function checkFields (list: TrustList): string[] {
  if (list.name.length > MAX_NAME_CHARS) throw trustListRejected('malformed', `trust list name of ${list.name.length} characters exceeds ${MAX_NAME_CHARS}`)
  if (list.sequence === 0n) throw trustListRejected('malformed', `trust list "${list.name}" has no sequence`)
  if (list.issuedAt === 0n || list.expiresAt <= list.issuedAt) throw trustListRejected('malformed', `trust list "${list.name}" must expire after it is issued (issued ${list.issuedAt}, expires ${list.expiresAt})`)
  if (list.expiresAt > BigInt(Number.MAX_SAFE_INTEGER)) throw trustListRejected('malformed', `trust list "${list.name}" expiry ${list.expiresAt} is not a unix time in ms`)
  if (list.peers.length === 0) throw trustListRejected('malformed', `trust list "${list.name}" names no peers`)
  const ids = new Set<string>()
  for (const [i, bytes] of list.peers.entries()) {
    const id = ed25519PeerId(bytes)
    if (id == null) throw trustListRejected('malformed', `trust list "${list.name}": peers[${i}] is not an Ed25519 peer id`)
    if (ids.has(id)) throw trustListRejected('malformed', `trust list "${list.name}": peers[${i}] (${id}) is listed twice`)
    ids.add(id)
  }
  return [...ids]
}

function ed25519PeerId (bytes: Uint8Array): string | undefined {
  try {
    const peer = peerIdFromMultihash(Digest.decode(bytes))
    return peer.type === 'Ed25519' ? peer.toString() : undefined
  } catch {
    return undefined
  }
}

const days = (ms: number): string => (ms / 86_400_000).toFixed(ms % 86_400_000 === 0 ? 0 : 1)
const iso = (ms: number): string =>
  Number.isFinite(ms) && Math.abs(ms) < 8.64e15 ? new Date(ms).toISOString() : String(ms)
