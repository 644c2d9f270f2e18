/**
 * No false "stored" on a DHT PUT. kad-dht 15 answers every PUT_VALUE by echoing the request,
 * also when its validator rejected the record and nothing was stored (rpc/handlers/put-value.js
 * logs the error and returns the message), and it stores a valid record over a better one it
 * already holds (no selector on PUT). A putter was told "stored" for a record no GET would
 * return, and an old record could displace a newer one at each node it was replayed to.
 *
 * This guard takes over the PUT_VALUE handler: a record is stored (by kad-dht's own handler)
 * only when its key is in a namespace this node has a validator for, the validator accepts
 * it, and the selector does not prefer the record already held. Otherwise the answer carries
 * no record, or the one kept, so the putter's kad-dht reports "Value not put correctly" for
 * this peer (content-fetching put compares the answer's value with what it sent).
 */

import { Record as DhtRecord, type KadDHT } from '@libp2p/kad-dht'
import { equals as uint8ArrayEquals } from 'uint8arrays/equals'
import { toString as uint8ArrayToString } from 'uint8arrays/to-string'
import type { Logger, PeerId } from '@libp2p/interface'

export type DhtValidators = Record<string, (key: Uint8Array, value: Uint8Array) => Promise<void>>
export type DhtSelectors = Record<string, (key: Uint8Array, records: Uint8Array[]) => number>

/** The kad-dht message fields the handler reads and answers with. */
interface PutMessage { key?: Uint8Array, record?: Uint8Array }

interface RpcHandler { handle: (peerId: PeerId, msg: PutMessage) => Promise<PutMessage | undefined> }

/** The kad-dht 15 internals the guard replaces and reads; checked when it is installed. */
interface KadInternals {
  rpc?: { handlers?: Record<string, RpcHandler | undefined> }
  contentFetching?: { getLocal?: (key: Uint8Array) => Promise<DhtRecord> }
}

/** Why a PUT was not stored. */
export type PutRefusal = 'not-a-record' | 'foreign-namespace' | 'invalid' | 'worse-than-held'

export interface DhtPutRules {
  validators: DhtValidators
  selectors: DhtSelectors
  log: Logger
  /** sees every refused PUT (tests, metrics) */
  onRefuse?: (refusal: PutRefusal, key: Uint8Array | undefined, from: PeerId) => void
}

/**
 * Installs the guard on `dht`'s PUT_VALUE handler. Throws when kad-dht's internals are not
 * the ones this was written for (a kad-dht upgrade must revisit it, not silently lose it).
 */
export function guardDhtPuts (dht: KadDHT, rules: DhtPutRules): void {
  const internals = dht as unknown as KadInternals
  const handlers = internals.rpc?.handlers
  const original = handlers?.PUT_VALUE
  const contentFetching = internals.contentFetching
  if (handlers == null || original == null || typeof original.handle !== 'function' || typeof contentFetching?.getLocal !== 'function') {
    throw new Error('kad-dht internals changed (rpc.handlers.PUT_VALUE, contentFetching.getLocal): the DHT put guard (src/node/dht-put-guard.ts) needs updating')
  }
  const held = async (key: Uint8Array): Promise<Uint8Array | undefined> => {
    try {
      return (await contentFetching.getLocal?.(key))?.value
    } catch {
      // none, or one that no longer validates: the new record may replace it
      return undefined
    }
  }
  handlers.PUT_VALUE = {
    handle: async (peerId, msg) => {
      if (msg.record == null) return await original.handle(peerId, msg) // kad-dht's own error
      const verdict = await screen(msg.record, rules, held)
      if (verdict.store) return await original.handle(peerId, msg)
      rules.log('refused DHT put from %p: %s', peerId, verdict.refusal)
      rules.onRefuse?.(verdict.refusal, verdict.key, peerId)
      return { ...msg, record: verdict.kept }
    }
  }
}

type Verdict = { store: true } | { store: false, refusal: PutRefusal, key?: Uint8Array, kept?: Uint8Array }

async function screen (
  bytes: Uint8Array,
  rules: DhtPutRules,
  held: (key: Uint8Array) => Promise<Uint8Array | undefined>
): Promise<Verdict> {
  let record: DhtRecord
  try {
    record = DhtRecord.deserialize(bytes)
  } catch {
    return { store: false, refusal: 'not-a-record' }
  }
  const { key, value } = record
  // kad-dht keys are "/<namespace>/<rest>"; a key with no namespace has no validator and is refused
  const parts = uint8ArrayToString(key).split('/')
  const namespace = parts.length >= 3 && parts[0] === '' ? parts[1] : undefined
  const validate = namespace == null ? undefined : rules.validators[namespace]
  if (namespace == null || validate == null) return { store: false, refusal: 'foreign-namespace', key }
  try {
    await validate(key, value)
  } catch {
    return { store: false, refusal: 'invalid', key }
  }
  const current = await held(key)
  const select = rules.selectors[namespace]
  if (current != null && select != null && !uint8ArrayEquals(current, value) && select(key, [current, value]) === 0) {
    return { store: false, refusal: 'worse-than-held', key, kept: new DhtRecord(key, current, new Date()).serialize() }
  }
  return { store: true }
}
