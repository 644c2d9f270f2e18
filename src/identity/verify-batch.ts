/**
 * A batch of signatures packed into one buffer, so a batch crosses to a worker thread as one
 * transfer instead of a structured clone per item: per item u32le(message length) ‖ public key
 * (32) ‖ signature (64) ‖ message (an item's prefix and message, side by side). Only ever built
 * by this process for its own workers.
 */
import type { SignedBytes } from './signature.js'

export interface BatchRequest { id: number, packed: ArrayBuffer }
export interface BatchReply { id: number, results: Uint8Array }

/** A verifier worker's thread name on Linux (15 bytes at most): top -H and the benches tell those threads apart. */
export const VERIFIER_THREAD_NAME = 'idlegrid-verify'

// signature.ts's sizes, repeated: it imports this module (through the pool), and a value
// imported back from it would not be initialised yet
const PUBLIC_KEY_BYTES = 32
const SIGNATURE_BYTES = 64
const HEADER_BYTES = 4 + PUBLIC_KEY_BYTES + SIGNATURE_BYTES

/** Items whose key or signature has the wrong length are not packable: the caller refuses them first. */
export function packBatch (items: readonly SignedBytes[]): ArrayBuffer {
  let size = 0
  for (const item of items) size += HEADER_BYTES + (item.prefix?.length ?? 0) + item.message.length
  const out = new Uint8Array(size)
  const view = new DataView(out.buffer)
  let at = 0
  for (const { publicKey, prefix, message, signature } of items) {
    const prefixLength = prefix?.length ?? 0
    view.setUint32(at, prefixLength + message.length, true)
    out.set(publicKey, at + 4)
    out.set(signature, at + 4 + PUBLIC_KEY_BYTES)
    // the signed message is prefix ‖ message: written side by side, never joined first
    if (prefix != null) out.set(prefix, at + HEADER_BYTES)
    out.set(message, at + HEADER_BYTES + prefixLength)
    at += HEADER_BYTES + prefixLength + message.length
  }
  return out.buffer
}

/** The items of a packed batch, as views into it. */
export function unpackBatch (packed: Uint8Array): SignedBytes[] {
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength)
  const items: SignedBytes[] = []
  let at = 0
  while (at + HEADER_BYTES <= packed.length) {
    const length = view.getUint32(at, true)
    const end = at + HEADER_BYTES + length
    if (end > packed.length) throw new RangeError(`packed batch item at ${at} runs past its end`)
    items.push({
      publicKey: packed.subarray(at + 4, at + 4 + PUBLIC_KEY_BYTES),
      signature: packed.subarray(at + 4 + PUBLIC_KEY_BYTES, at + HEADER_BYTES),
      message: packed.subarray(at + HEADER_BYTES, end)
    })
    at = end
  }
  return items
}
