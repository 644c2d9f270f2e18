/** Lower-case hex, for ids in maps, logs and JSON. */
export function toHex (bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
}
