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
    const next = element === 'varint' ? readVarint(run, pos)[1] : pos + (element === 'fixed32' ? 4 : 8)
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
    case WIRE.varint: end = readVarint(bytes, pos)[1]; break
    case WIRE.fixed64: end = pos + 8; break
    case WIRE.fixed32: end = pos + 4; break
    case WIRE.bytes: {
      const [length, after] = readVarint(bytes, pos)
      if (length > BigInt(bytes.byteLength - after)) throw new Error(`field ${fieldNumber} has a length of ${length} bytes, past the end of the message`)
      end = after + Number(length)
      break
    }
    case WIRE.startGroup: {
      // an unknown field from an older protobuf syntax: skipped up to its matching end tag
      if (depth >= MAX_GROUP_DEPTH) throw new Error('groups nested too deep')
      end = pos
      for (;;) {
        const [tag, afterTag] = readVarint(bytes, end)
        const type = Number(tag & 7n)
        if (type === WIRE.endGroup) {
          if (Number(tag >> 3n) !== fieldNumber) throw new Error(`group ${fieldNumber} closed by another field's end tag`)
          end = afterTag
          break
        }
        end = skipValue(bytes, afterTag, type, Number(tag >> 3n), depth + 1)
      }
      break
    }
    default: throw new Error(`wire type ${wireType} is not a protobuf wire type here`)
  }
  if (end > bytes.byteLength) throw new Error(`field ${fieldNumber} runs past the end of the message`)
  return end
}

/** A base-128 varint at `pos` (at most 10 bytes) and the position after it. */
export function readVarint (bytes: Uint8Array, pos: number): [bigint, number] {
  let value = 0n
  for (let i = 0; i < 10; i++) {
    if (pos + i >= bytes.byteLength) throw new Error('message ends inside a varint')
    const b = bytes[pos + i]
    value |= BigInt(b & 0x7f) << BigInt(7 * i)
    if ((b & 0x80) === 0) return [value, pos + i + 1]
  }
  throw new Error('varint longer than 10 bytes')
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
