/**
 * A tiny protobuf wire writer and field splitter for tests that need encodings our codecs
 * never produce (packed runs, reordered fields, explicit defaults, unknown fields). Written
 * from the protobuf encoding spec, independent of protocols/packed.ts.
 */

export function varint (value: number | bigint): Uint8Array {
  let v = BigInt(value)
  const out: number[] = []
  while (v > 0x7fn) {
    out.push(Number(v & 0x7fn) | 0x80)
    v >>= 7n
  }
  out.push(Number(v))
  return Uint8Array.from(out)
}

export function tag (field: number, wireType: number): Uint8Array {
  return varint((field << 3) | wireType)
}

export function cat (...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.byteLength
  }
  return out
}

/** field `n` as a length-delimited value */
export function lengthDelimited (field: number, body: Uint8Array): Uint8Array {
  return cat(tag(field, 2), varint(body.byteLength), body)
}

/** field `n` packed: one length-delimited run of varints */
export function packedVarints (field: number, values: Array<number | bigint>): Uint8Array {
  return lengthDelimited(field, cat(...values.map(v => varint(v))))
}

/** field `n` unpacked: one tagged varint per value */
export function unpackedVarints (field: number, values: Array<number | bigint>): Uint8Array {
  return cat(...values.map(v => cat(tag(field, 0), varint(v))))
}

export interface WireField { field: number, wireType: number, bytes: Uint8Array }

function readVarint (buf: Uint8Array, pos: number): [number, number] {
  let value = 0
  let shift = 0
  for (;;) {
    const b = buf[pos++]
    value += (b & 0x7f) * 2 ** shift
    shift += 7
    if ((b & 0x80) === 0) return [value, pos]
  }
}

/** the top-level fields of a (well-formed, group-free) message, in order, each with its tag */
export function splitFields (buf: Uint8Array): WireField[] {
  const out: WireField[] = []
  let pos = 0
  while (pos < buf.byteLength) {
    const start = pos
    const [t, afterTag] = readVarint(buf, pos)
    const wireType = t % 8
    pos = afterTag
    if (wireType === 0) pos = readVarint(buf, pos)[1]
    else if (wireType === 1) pos += 8
    else if (wireType === 5) pos += 4
    else if (wireType === 2) {
      const [len, after] = readVarint(buf, pos)
      pos = after + len
    } else throw new Error(`wire type ${wireType} not expected in a test message`)
    out.push({ field: Math.floor(t / 8), wireType, bytes: buf.subarray(start, pos) })
  }
  return out
}
