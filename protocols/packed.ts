/**
 * Protobuf wire primitives for the normaliser (normalise.ts): reading varints, skipping a
 * field's value, and rewriting a packed repeated run as unpacked elements.
 *
 * Packed repeated scalars: protobuf lets an encoder write a repeated scalar or enum field
 * either unpacked (one tag per element) or packed (one length-delimited run of elements), and
 * every parser must accept both; proto3 encoders write packed by default. protons' generated
 * decoders read only the unpacked form (a packed run is misread as one element followed by
 * garbage), so the normaliser rewrites packed runs into their unpacked form, which is the same
 * message (protobuf encoding spec, "Packed Repeated Fields").
 */

/** Wire type of a packable field's elements: varint (ints, bools, enums), fixed32, fixed64. */
export type PackedElement = 'varint' | 'fixed32' | 'fixed64'

export const WIRE = { varint: 0, fixed64: 1, bytes: 2, startGroup: 3, endGroup: 4, fixed32: 5 } as const
/** unknown group fields nest at most this deep before the message is refused */
const MAX_GROUP_DEPTH = 32

/** One packed run as a sequence of unpacked (tag, element) pairs. */
export function expandRun (run: Uint8Array, fieldNumber: number, element: PackedElement): Uint8Array {
  const wireType = element === 'varint' ? WIRE.varint : element === 'fixed32' ? WIRE.fixed32 : WIRE.fixed64
  const tag = encodeVarint((BigInt(fieldNumber) << 3n) | BigInt(wireType))
  const parts: Uint8Array[] = []
  let pos = 0
  while (pos < run.byteLength) {
    const next = element === 'varint' ? varintEnd(run, pos) : pos + (element === 'fixed32' ? 4 : 8)
    if (next > run.byteLength) throw new Error(`packed field ${fieldNumber} ends inside an element`)
    parts.push(tag, run.subarray(pos, next))
    pos = next
  }
  return concat(parts)
}

/**
 * Position after the value of a field of `wireType` that starts at `pos`. A length prefix
 * that reaches past the end of `bytes` (any of 2^32 or more does, as no input is that long)
 * is refused here: protons reads lengths as uint32 and would take 2^32 + 5 for 5.
 */
export function skipValue (bytes: Uint8Array, pos: number, wireType: number, fieldNumber: number, depth = 0): number {
  let end: number
  switch (wireType) {
    case WIRE.varint: end = varintEnd(bytes, pos); break
    case WIRE.fixed64: end = pos + 8; break
    case WIRE.fixed32: end = pos + 4; break
    case WIRE.bytes: {
      const [length, after] = readVarint(bytes, pos)
      if (length > bytes.byteLength - after) throw new Error(`field ${fieldNumber} has a length of ${length} bytes, past the end of the message`)
      end = after + length
      break
    }
    case WIRE.startGroup: {
      // an unknown field from an older protobuf syntax: skipped up to its matching end tag
      if (depth >= MAX_GROUP_DEPTH) throw new Error('groups nested too deep')
      end = pos
      for (;;) {
        const { field, wireType: type, end: afterTag } = readTag(bytes, end, { field: 0, wireType: 0, end: 0 })
        if (type === WIRE.endGroup) {
          if (field !== fieldNumber) throw new Error(`group ${fieldNumber} closed by another field's end tag`)
          end = afterTag
          break
        }
        end = skipValue(bytes, afterTag, type, field, depth + 1)
      }
      break
    }
    default: throw new Error(`wire type ${wireType} is not a protobuf wire type here`)
  }
  if (end > bytes.byteLength) throw new Error(`field ${fieldNumber} runs past the end of the message`)
  return end
}

/**
 * A base-128 varint at `pos` (at most 10 bytes) and the position after it. The value is a
 * number (no BigInt per field: a 4 MiB message may hold two million fields): exact below
 * 2^53, and above that still larger than any length or tag this reader accepts.
 */
export function readVarint (bytes: Uint8Array, pos: number): [number, number] {
  let value = 0
  let scale = 1
  for (let i = 0; i < 10; i++) {
    if (pos + i >= bytes.byteLength) throw new Error('message ends inside a varint')
    const b = bytes[pos + i]
    value += (b & 0x7f) * scale
    scale *= 128
    if ((b & 0x80) === 0) return [value, pos + i + 1]
  }
  throw new Error('varint longer than 10 bytes')
}

/** Position after the varint at `pos`, without its value (skipping allocates nothing). */
export function varintEnd (bytes: Uint8Array, pos: number): number {
  for (let i = pos; i < pos + 10; i++) {
    if (i >= bytes.byteLength) throw new Error('message ends inside a varint')
    if ((bytes[i] & 0x80) === 0) return i + 1
  }
  throw new Error('varint longer than 10 bytes')
}

/** A field's tag as readTag leaves it: one object reused, as a message may hold millions of fields. */
export interface Tag { field: number, wireType: number, end: number }

/** Reads the tag at `pos` into `into` (field number, wire type, position after); tags are 32-bit. */
export function readTag (bytes: Uint8Array, pos: number, into: Tag): Tag {
  const b = bytes[pos]
  if (b < 0x80 && pos < bytes.byteLength) {
    // one-byte tags (fields 1-15) are nearly all of them
    into.field = b >> 3
    into.wireType = b & 7
    into.end = pos + 1
    return into
  }
  const [tag, after] = readVarint(bytes, pos)
  if (tag >= 2 ** 32) throw new Error('field tag beyond 32 bits')
  into.field = Math.floor(tag / 8)
  into.wireType = tag % 8
  into.end = after
  return into
}

export function encodeVarint (value: bigint): Uint8Array {
  const out: number[] = []
  while (value > 0x7fn) {
    out.push(Number(value & 0x7fn) | 0x80)
    value >>= 7n
  }
  out.push(Number(value))
  return Uint8Array.from(out)
}

export function concat (parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.byteLength
  }
  return out
}
