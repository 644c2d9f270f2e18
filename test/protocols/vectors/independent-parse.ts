/**
 * Protobuf parsing for the independent checker, on top of protobufjs 7, which departs from the
 * protobuf spec in two ways the vectors reach:
 * - a non-repeated message field sent twice keeps only the last occurrence; protobuf merges
 *   the later into the earlier (repeated fields append, set scalars replace, sub-messages merge);
 * - a length prefix is read as uint32, so 2^32 + 5 is taken for 5; a length reaching past its
 *   message is malformed.
 * This walks the fields itself, checks every length, lets protobufjs decode one field at a time,
 * and merges the decoded objects (an object merge, unlike our codec's byte rewrite).
 */

import protobuf from 'protobufjs'

/** `bytes` as a `type`, merged as protobuf specifies; throws Error when they are not one. */
export function parseMerged (type: protobuf.Type, bytes: Uint8Array): protobuf.Message {
  const out: any = type.create()
  let pos = 0
  while (pos < bytes.length) {
    const start = pos
    const [key, afterKey] = readVarint(bytes, pos)
    if (key >= 2n ** 32n) throw new Error('tag beyond 32 bits')
    const wireType = Number(key & 7n)
    pos = skip(bytes, afterKey, wireType)
    const field = type.fieldsById[Number(key >> 3n)]
    let part: any
    if (field?.resolvedType instanceof protobuf.Type && wireType === 2) {
      const sub = parseMerged(field.resolvedType, bytes.subarray(readVarint(bytes, afterKey)[1], pos))
      part = { [field.name]: field.repeated ? [sub] : sub }
    } else {
      part = type.decode(bytes.subarray(start, pos))
    }
    mergeInto(type, out, part)
  }
  return out
}

/** protobuf's MergeFrom: the fields set in `from` merged into `into`. */
function mergeInto (type: protobuf.Type, into: any, from: any): void {
  for (const field of type.fieldsArray) {
    if (!Object.prototype.hasOwnProperty.call(from, field.name) || from[field.name] == null) continue
    const value = from[field.name]
    if (field.repeated) {
      into[field.name] = [...(Object.prototype.hasOwnProperty.call(into, field.name) ? into[field.name] : []), ...value]
      continue
    }
    const other = field.partOf?.fieldsArray.filter(f => f !== field && into[f.name] != null) ?? []
    // setting one oneof member clears the others
    for (const f of other) delete into[f.name]
    if (
      field.resolvedType instanceof protobuf.Type &&
      Object.prototype.hasOwnProperty.call(into, field.name) &&
      into[field.name] != null
    ) {
      mergeInto(field.resolvedType, into[field.name], value)
    } else {
      into[field.name] = value
    }
  }
}

/** Position after the value at `pos`; any length reaching past `bytes` is refused. */
function skip (bytes: Uint8Array, pos: number, wireType: number): number {
  let end: number
  if (wireType === 0) end = readVarint(bytes, pos)[1]
  else if (wireType === 1) end = pos + 8
  else if (wireType === 5) end = pos + 4
  else if (wireType === 2) {
    const [length, after] = readVarint(bytes, pos)
    if (length > BigInt(bytes.length - after)) throw new Error(`length ${length} runs past the end`)
    end = after + Number(length)
  } else if (wireType === 3) {
    const reader = protobuf.Reader.create(bytes)
    reader.pos = pos
    reader.skipType(3)
    end = reader.pos
  } else {
    throw new Error(`wire type ${wireType}`)
  }
  if (end > bytes.length) throw new Error('field runs past the end')
  return end
}

function readVarint (bytes: Uint8Array, pos: number): [bigint, number] {
  let value = 0n
  for (let i = 0; i < 10 && pos + i < bytes.length; i++) {
    value |= BigInt(bytes[pos + i] & 0x7f) << BigInt(7 * i)
    if ((bytes[pos + i] & 0x80) === 0) return [value, pos + i + 1]
  }
  throw new Error('bad varint')
}
