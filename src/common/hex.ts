/** Lower-case hex, for ids in maps, logs and JSON. */
export function toHex (bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
}

/** Bytes from hex text; undefined for anything that is not an even-length hex string. */
export function fromHex (text: string): Uint8Array | undefined {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) return undefined
  return new Uint8Array(Buffer.from(text, 'hex'))
}
