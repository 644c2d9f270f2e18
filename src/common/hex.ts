/**
 * Buffer's own hex encoder, called on the view itself. Buffer.from(view.buffer, …) first moves a
 * small array's bytes off V8's heap (a hash is a 32-byte array of its own, kept on the heap until
 * its `buffer` is read): for the ledger's hashes that was half of every toHex. Undocumented, so
 * looked up once and replaced by the documented route where a Node lacks it.
 */
type HexSlice = (this: Uint8Array, start: number, end: number) => string
const hexSlice = (Buffer.prototype as unknown as { hexSlice?: HexSlice }).hexSlice

/** Lower-case hex, for ids in maps, logs and JSON. */
export function toHex (bytes: Uint8Array): string {
  if (hexSlice != null) return hexSlice.call(bytes, 0, bytes.byteLength)
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
}
