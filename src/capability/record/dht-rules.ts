/**
 * kad-dht rules for the `idlegrid` key namespace: the validator every node runs on
 * `/idlegrid/...` values and the selector that picks one record among several for a key.
 */

import { compare as uint8ArrayCompare } from 'uint8arrays/compare'
import { isRecordRejection, type CapabilityRecordError } from '../errors.js'
import { openCapabilityRecord } from './record.js'
import type { CapabilityRecord } from '../../../protocols/capability.js'
import type { Signed } from '../../identity/index.js'

export interface RecordRejectionSink {
  (key: Uint8Array, error: CapabilityRecordError): void
}

/**
 * The kad-dht validator for every `/idlegrid/...` key: capability records under
 * `/idlegrid/cap/` are opened in full; any other idlegrid key is refused. Throws to reject.
 * `onReject` sees every rejection (discovery uses it to say why a record was dropped).
 */
export function capabilityRecordValidator (
  onReject?: RecordRejectionSink
): (key: Uint8Array, value: Uint8Array) => Promise<void> {
  return async (key, value) => {
    try {
      openCapabilityRecord(value, { key })
    } catch (err) {
      if (isRecordRejection(err)) onReject?.(key, err)
      throw err
    }
  }
}

/**
 * The kad-dht selector: among the records for one key the valid one with the highest
 * sequence wins; equal sequences: the later issued_at; then the smaller message hash, so
 * every node picks the same record. Invalid records never win over a valid one.
 */
export function selectCapabilityRecord (key: Uint8Array, records: Uint8Array[], now = Date.now()): number {
  let best = 0
  let bestRecord: Signed<CapabilityRecord> | undefined
  records.forEach((value, i) => {
    let opened: Signed<CapabilityRecord>
    try {
      opened = openCapabilityRecord(value, { key, now })
    } catch {
      return
    }
    if (bestRecord == null || compareRecords(opened, bestRecord) > 0) {
      best = i
      bestRecord = opened
    }
  })
  return best
}

/** > 0 when `a` is preferred over `b` (selector order). */
function compareRecords (a: Signed<CapabilityRecord>, b: Signed<CapabilityRecord>): number {
  if (a.message.sequence !== b.message.sequence) return a.message.sequence > b.message.sequence ? 1 : -1
  if (a.message.issuedAt !== b.message.issuedAt) return a.message.issuedAt > b.message.issuedAt ? 1 : -1
  return -uint8ArrayCompare(a.hash, b.hash)
}

/** The kad-dht namespace our keys live in (first path segment of `/idlegrid/...`). */
export const DHT_NAMESPACE = 'idlegrid'
