/**
 * Packed repeated scalars. Protobuf lets an encoder write a repeated scalar or enum field
 * either unpacked (one tag per element) or packed (one length-delimited run of elements), and
 * every parser must accept both; proto3 encoders write packed by default. protons' generated
 * decoders read only the unpacked form (a packed run is misread as one element followed by
 * garbage), so `decodeBounded` first rewrites the packed runs of the fields listed here into
 * their unpacked form, which is the same message (protobuf encoding spec, "Packed Repeated
 * Fields"). Signatures are never checked over the rewritten bytes: envelopes are verified over
 * the payload as received, and the rewrite only feeds the decoder.
 *
 * Every repeated scalar or enum field of every .proto must be listed in PACKED_FIELDS; a test
 * (test/protocols/packed.spec.ts) reads the .proto files and fails when one is missing.
 */

import { CapabilityRecord } from './capability.js'

/** Wire type of a packable field's elements: varint (ints, bools, enums), fixed32, fixed64. */
export type PackedElement = 'varint' | 'fixed32' | 'fixed64'

/** A message's packable repeated fields (top level), by field number. */
export type PackedFields = Readonly<Record<number, PackedElement>>

/** Decoders whose messages have packable repeated fields, with those fields. */
export const PACKED_FIELDS: ReadonlyMap<unknown, PackedFields> = new Map<unknown, PackedFields>([
  // accepted_tiers: repeated Tier
  [CapabilityRecord, { 9: 'varint' }]
])

const WIRE = { varint: 0, fixed64: 1, bytes: 2, startGroup: 3, endGroup: 4, fixed32: 5 } as const
/** unknown group fields nest at most this deep before the message is refused */
const MAX_GROUP_DEPTH = 32

/**
 * `bytes` with every packed run of a field in `fields` rewritten as unpacked elements; the same
 * array when there is none. Throws Error on bytes that are not a protobuf message.
 */
export function unpackRepeated (bytes: Uint8Array, fields: PackedFields): Uint8Array {
  const out: Uint8Array[] = []
  let copiedUpTo = 0
  let pos = 0
  while (pos < bytes.byteLength) {
    const start = pos
    const [tag, afterTag] = readVarint(bytes, pos)
    const fieldNumber = Number(tag >> 3n)
    const wireType = Number(tag & 7n)
    pos = skipValue(bytes, afterTag, wireType, fieldNumber, 0)
    const element = fields[fieldNumber]
    if (element == null || wireType !== WIRE.bytes) continue
    const [length, runStart] = readVarint(bytes, afterTag)
    out.push(bytes.subarray(copiedUpTo, start), expandRun(bytes.subarray(runStart, runStart + Number(length)), fieldNumber, element))
    copiedUpTo = pos
  }
  if (out.length === 0) return bytes
  out.push(bytes.subarray(copiedUpTo))
  return concat(out)
}

/** One packed run as a sequence of unpacked (tag, element) pairs. */
function expandRun (run: Uint8Array, fieldNumber: number, element: PackedElement): Uint8Array {
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

/** Position after the value of a field of `wireType` that starts at `pos`. */
function skipValue (bytes: Uint8Array, pos: number, wireType: number, fieldNumber: number, depth: number): number {
  let end: number
  switch (wireType) {
    case WIRE.varint: end = readVarint(bytes, pos)[1]; break
    case WIRE.fixed64: end = pos + 8; break
    case WIRE.fixed32: end = pos + 4; break
    case WIRE.bytes: {
      const [length, after] = readVarint(bytes, pos)
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
function readVarint (bytes: Uint8Array, pos: number): [bigint, number] {
  let value = 0n
  for (let i = 0; i < 10; i++) {
    if (pos + i >= bytes.byteLength) throw new Error('message ends inside a varint')
    const b = bytes[pos + i]
    value |= BigInt(b & 0x7f) << BigInt(7 * i)
    if ((b & 0x80) === 0) return [value, pos + i + 1]
  }
  throw new Error('varint longer than 10 bytes')
}

function encodeVarint (value: bigint): Uint8Array {
  const out: number[] = []
  while (value > 0x7fn) {
    out.push(Number(value & 0x7fn) | 0x80)
    value >>= 7n
  }
  out.push(Number(value))
  return Uint8Array.from(out)
}

function concat (parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.byteLength
  }
  return out
}
