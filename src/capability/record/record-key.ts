/** The DHT key of a provider's capability record: `/idlegrid/cap/<peer id>` (protocols/README.md §6). */

import { peerIdFromString } from '@libp2p/peer-id'
import { fromString as uint8ArrayFromString } from 'uint8arrays/from-string'
import { toString as uint8ArrayToString } from 'uint8arrays/to-string'
import { CAPABILITY_KEY_PREFIX } from '../../../protocols/ids.js'
import { recordRejected } from '../errors.js'
import type { PeerId } from '@libp2p/interface'

/** The DHT key text of a provider's record: `/idlegrid/cap/<base58 peer id>`. */
export function capabilityKeyText (peerId: PeerId | string): string {
  return CAPABILITY_KEY_PREFIX + peerId.toString()
}

/** The DHT key (UTF-8 bytes) of a provider's record. */
export function capabilityKey (peerId: PeerId | string): Uint8Array {
  return uint8ArrayFromString(capabilityKeyText(peerId))
}

const MAX_KEY_BYTES = CAPABILITY_KEY_PREFIX.length + 64

/** The peer id a record key names; ERR_CAPABILITY_RECORD 'bad-key' when it names none. */
export function peerIdFromCapabilityKey (key: Uint8Array): PeerId {
  if (key.byteLength > MAX_KEY_BYTES) throw recordRejected('bad-key', `record key of ${key.byteLength} bytes is too long`)
  const text = uint8ArrayToString(key)
  if (!text.startsWith(CAPABILITY_KEY_PREFIX)) throw recordRejected('bad-key', `record key "${text.slice(0, 64)}" is not under ${CAPABILITY_KEY_PREFIX}`)
  try {
    const peerId = peerIdFromString(text.slice(CAPABILITY_KEY_PREFIX.length))
    if (peerId.type !== 'Ed25519') throw new Error('not Ed25519')
    return peerId
  } catch {
    throw recordRejected('bad-key', `record key "${text.slice(0, 80)}" does not end in an Ed25519 peer id`)
  }
}
