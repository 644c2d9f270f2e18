/**
 * Structure-aware mutation of protobuf bytes (and of text, for YAML files), driven by
 * fast-check so that every input is reproducible from a seed and shrinks on failure.
 *
 * An input is a seed (a valid message the project's own code made, or a conformance vector)
 * with a few mutations applied, or random bytes. Mutations know the protobuf wire format:
 * they change varints, length prefixes, field numbers and wire types, duplicate, drop and
 * swap fields, nest a message inside a field, splice two seeds, recurse into sub-messages,
 * and also do the blind byte edits (flip, insert, delete, truncate) a libFuzzer would.
 */
import fc from 'fast-check'

/** One field of a message as laid out on the wire (byte offsets into the message). */
interface WireField {
  start: number
  /** where the value starts (after the tag; for wire type 2, after the length too) */
  valueStart: number
  end: number
  field: number
  wireType: number
  /** wire type 2: where the length prefix starts */
  lengthStart?: number
}

function readVarint (buf: Uint8Array, pos: number): { value: number, next: number } | undefined {
  let value = 0
  let mul = 1
  for (let i = 0; i < 10 && pos + i < buf.length; i++) {
    const b = buf[pos + i]
    value += (b & 0x7f) * mul
    mul *= 128
    if (b < 0x80) return { value, next: pos + i + 1 }
  }
  return undefined
}

export function encodeVarint (value: bigint): Uint8Array {
  const out: number[] = []
  let v = BigInt.asUintN(64, value)
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80)
    v >>= 7n
  }
  out.push(Number(v))
  return Uint8Array.from(out)
}

/** The top-level fields of `buf`, or undefined when it is not a well-formed message. */
export function parseFields (buf: Uint8Array): WireField[] | undefined {
  const fields: WireField[] = []
  let pos = 0
  while (pos < buf.length) {
    const start = pos
    const tag = readVarint(buf, pos)
    if (tag == null) return undefined
    pos = tag.next
    const wireType = tag.value % 8
    const field = Math.floor(tag.value / 8)
    let lengthStart: number | undefined
    if (wireType === 0) {
      const v = readVarint(buf, pos)
      if (v == null) return undefined
      pos = v.next
    } else if (wireType === 1) {
      pos += 8
    } else if (wireType === 5) {
      pos += 4
    } else if (wireType === 2) {
      lengthStart = pos
      const len = readVarint(buf, pos)
      if (len == null) return undefined
      pos = len.next + len.value
      if (pos > buf.length) return undefined
      fields.push({ start, valueStart: len.next, end: pos, field, wireType, lengthStart })
      continue
    } else {
      return undefined
    }
    if (pos > buf.length) return undefined
    fields.push({
      start,
      valueStart: wireType === 0 ? tag.next : pos - (wireType === 1 ? 8 : 4),
      end: pos,
      field,
      wireType
    })
  }
  return fields
}

const cat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) { out.set(p, at); at += p.length }
  return out
}

const tagOf = (field: number, wireType: number): Uint8Array => encodeVarint(BigInt(field) * 8n + BigInt(wireType))
const lengthDelimited = (field: number, content: Uint8Array): Uint8Array =>
  cat(tagOf(field, 2), encodeVarint(BigInt(content.length)), content)

/** Varint values that sit on boundaries decoders get wrong. */
const INTERESTING: bigint[] = [
  0n,
  1n,
  2n,
  127n,
  128n,
  255n,
  256n,
  16_383n,
  16_384n,
  65_535n,
  1_048_576n,
  2n ** 31n - 1n,
  2n ** 31n,
  2n ** 32n - 1n,
  2n ** 32n,
  2n ** 53n - 1n,
  2n ** 53n,
  2n ** 63n - 1n,
  2n ** 63n,
  2n ** 64n - 1n,
  1_700_000_000_000n,
  4_000_000_000_000n
]

/** One mutation as fast-check generates it: a kind and a few numbers it reads modulo what fits. */
export interface Mutation { kind: number, a: number, b: number, c: number, bytes: Uint8Array }

export const MUTATION_KINDS = 18

function pick<T> (items: readonly T[], n: number): T {
  return items[n % items.length]
}

/** Applies one mutation; `seeds` are the other valid messages (for splicing and nesting). */
export function applyMutation (input: Uint8Array, m: Mutation, seeds: readonly Uint8Array[], depth = 0): Uint8Array {
  const len = input.length
  const pos = len === 0 ? 0 : m.a % (len + 1)
  const fields = parseFields(input)
  const field = fields != null && fields.length > 0 ? pick(fields, m.b) : undefined
  switch (m.kind % MUTATION_KINDS) {
    case 0: { // flip a bit
      if (len === 0) return m.bytes
      const out = input.slice()
      out[m.a % len] ^= 1 << (m.b % 8)
      return out
    }
    case 1: { // set a byte to an interesting value
      if (len === 0) return Uint8Array.of(m.b & 0xff)
      const out = input.slice()
      out[m.a % len] = pick([0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x0a, 0x12, 0x1a, m.c & 0xff], m.b)
      return out
    }
    case 2: // insert bytes
      return cat(input.subarray(0, pos), m.bytes, input.subarray(pos))
    case 3: // delete a range
      return cat(input.subarray(0, pos), input.subarray(Math.min(len, pos + 1 + (m.b % 16))))
    case 4: // truncate
      return input.subarray(0, len === 0 ? 0 : m.a % len)
    case 5: { // a varint field gets an interesting value (or an overlong encoding)
      if (field == null) return applyMutation(input, { ...m, kind: 0 }, seeds, depth)
      const value = pick(INTERESTING, m.c)
      const encoded =
        m.c % 7 === 0
          ? cat(Uint8Array.from(encodeVarint(value).map(b => b | 0x80)), Uint8Array.of(0x00))
          : encodeVarint(value)
      if (field.wireType === 0) return cat(input.subarray(0, field.valueStart), encoded, input.subarray(field.end))
      return cat(input.subarray(0, field.start), tagOf(field.field, 0), encoded, input.subarray(field.end))
    }
    case 6: { // a length prefix lies
      if (field?.lengthStart == null) return applyMutation(input, { ...m, kind: 2 }, seeds, depth)
      const actual = BigInt(field.end - field.valueStart)
      const lie = pick(
        [0n, actual - 1n, actual + 1n, actual + 1000n, 2n ** 31n, 2n ** 32n + actual, 2n ** 64n - 1n, BigInt(m.c)],
        m.c
      )
      return cat(
        input.subarray(0, field.lengthStart),
        encodeVarint(lie < 0n ? 0n : lie),
        input.subarray(field.valueStart)
      )
    }
    case 7: { // another field number (or a wire type that does not match)
      if (field == null) return applyMutation(input, { ...m, kind: 1 }, seeds, depth)
      const tag = readVarint(input, field.start)
      if (tag == null) return input
      const newTag =
        m.c % 2 === 0
          ? encodeVarint(
            BigInt(pick([0, 1, 2, 3, 9, 15, 16, 19, 20, 100, 536_870_911, m.b % 32], m.b)) * 8n +
                BigInt(field.wireType)
          )
          : encodeVarint(BigInt(field.field) * 8n + BigInt(m.b % 8))
      return cat(input.subarray(0, field.start), newTag, input.subarray(tag.next))
    }
    case 8: { // a field twice (or many times: repeated-field limits)
      if (field == null) return applyMutation(input, { ...m, kind: 2 }, seeds, depth)
      const copy = input.subarray(field.start, field.end)
      const times = m.c % 5 === 0 ? 1 + (m.c % 300) : 1
      const copies = cat(...Array.from({ length: times }, () => copy))
      return m.c % 2 === 0 ? cat(input, copies) : cat(input.subarray(0, field.end), copies, input.subarray(field.end))
    }
    case 9: // drop a field
      return field == null ? input : cat(input.subarray(0, field.start), input.subarray(field.end))
    case 10: { // swap two fields
      if (fields == null || fields.length < 2) return applyMutation(input, { ...m, kind: 3 }, seeds, depth)
      const [x, y] = [pick(fields, m.b), pick(fields, m.c)].sort((p, q) => p.start - q.start)
      if (x === y) return input
      return cat(
        input.subarray(0, x.start),
        input.subarray(y.start, y.end),
        input.subarray(x.end, y.start),
        input.subarray(x.start, x.end),
        input.subarray(y.end)
      )
    }
    case 11: { // nest: another seed (or this message) inside a length-delimited field
      const inner = m.c % 2 === 0 ? input : pick(seeds, m.c)
      if (field?.lengthStart != null) {
        return cat(input.subarray(0, field.start), lengthDelimited(field.field, inner), input.subarray(field.end))
      }
      return cat(input, lengthDelimited(1 + (m.b % 20), inner))
    }
    case 12: { // splice: a prefix of this one, a suffix of another seed
      const other = pick(seeds, m.c)
      return cat(input.subarray(0, pos), other.subarray(other.length === 0 ? 0 : m.b % other.length))
    }
    case 13: { // splice whole fields: this message's fields followed by another seed's
      const other = pick(seeds, m.c)
      return m.b % 2 === 0 ? cat(input, other) : cat(other, input)
    }
    case 14: { // mutate inside a sub-message, keeping the length prefix right
      if (field?.lengthStart == null || depth > 3) return applyMutation(input, { ...m, kind: 0 }, seeds, depth)
      const inner = applyMutation(
        input.subarray(field.valueStart, field.end),
        { ...m, kind: m.c, a: m.b, b: m.a },
        seeds,
        depth + 1
      )
      return cat(input.subarray(0, field.start), lengthDelimited(field.field, inner), input.subarray(field.end))
    }
    case 15: { // deep nesting: start-groups or length-delimited fields inside each other
      // start-groups of an unknown field make protons' skipType recurse: deep enough to overflow the stack
      const levels = 1 + (m.c % 40_000)
      if (m.b % 2 === 0) {
        return cat(
          input.subarray(0, pos),
          new Uint8Array(levels).fill(m.c % 3 === 0 ? 0x0b : 0x7b),
          input.subarray(pos)
        )
      }
      let inner = m.bytes
      for (let i = 0; i < Math.min(levels, 200); i++) inner = lengthDelimited(1 + (m.a % 15), inner)
      return cat(input, inner)
    }
    case 16: // a fixed64 / fixed32 field where none belongs
      return cat(
        input.subarray(0, pos),
        tagOf(1 + (m.b % 20), m.c % 2 === 0 ? 1 : 5),
        new Uint8Array(m.c % 2 === 0 ? 8 : 4).fill(0xff),
        input.subarray(pos)
      )
    default: // a length-delimited field of unknown number with random content
      return cat(input.subarray(0, pos), lengthDelimited(1 + (m.b % 40), m.bytes), input.subarray(pos))
  }
}

export const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.nat({ max: MUTATION_KINDS - 1 }),
  a: fc.nat(),
  b: fc.nat(),
  c: fc.nat(),
  bytes: fc.uint8Array({ maxLength: 24 })
})

export interface InputOptions {
  /** inputs longer than this are cut (keeps a run's memory bounded; bounds are tested separately) */
  maxBytes: number
  /** most random bytes in a random input */
  randomBytes?: number
}

/**
 * Inputs for one target: mostly seeds with one to five mutations, some random bytes, some
 * seeds unchanged (the valid path must keep working).
 */
export function bytesInput (seeds: readonly Uint8Array[], opts: InputOptions): fc.Arbitrary<Uint8Array> {
  if (seeds.length === 0) throw new Error('a fuzz target needs at least one seed')
  const seedIndex = fc.nat({ max: seeds.length - 1 })
  const mutated = fc.tuple(seedIndex, fc.array(mutationArb, { minLength: 1, maxLength: 5 })).map(([i, ms]) => {
    let out = seeds[i]
    for (const m of ms) {
      out = applyMutation(out, m, seeds)
      if (out.length > opts.maxBytes) out = out.subarray(0, opts.maxBytes)
    }
    return out
  })
  return fc.oneof(
    { arbitrary: mutated, weight: 16 },
    { arbitrary: fc.uint8Array({ maxLength: opts.randomBytes ?? 512 }), weight: 2 },
    { arbitrary: seedIndex.map(i => seeds[i]), weight: 1 }
  )
}

/** YAML-ish fragments a text mutation inserts: anchors, aliases, tags, flow collections, odd scalars. */
const YAML_TOKENS = ['&a ', '*a', '<<: *a\n', '!!binary ', '!!str ', '!!int ', '!!float ', '!!map ', '!!set ', '!!omap ', '? ', ': ', '- ', '{', '}', '[', ']', ',', '#', '|\n  ', '>\n  ',
  '"', "'", '\\u0000', '.inf', '-.inf', '.nan', 'null', '~', 'true', 'no', '0x7fffffffffffffff', '1e309', '-0', '0o17', '9007199254740993', '\n', '\t', '  ', '---\n', '...\n', '%YAML 1.1\n',
  '__proto__: {}\n', 'constructor: x\n', 'a'.repeat(300), '[[[[[[[[[[[[[[[[', '{a: {a: {a: {a: {a: 1}}}}}']

/** Text inputs: lines and tokens of valid files edited, duplicated, spliced; some random text. */
export function textInput (seeds: readonly string[], maxChars: number): fc.Arbitrary<Uint8Array> {
  const enc = new TextEncoder()
  const seedIndex = fc.nat({ max: seeds.length - 1 })
  const edit = fc.record({ kind: fc.nat({ max: 6 }), a: fc.nat(), b: fc.nat(), text: fc.string({ maxLength: 12 }) })
  const mutated = fc.tuple(seedIndex, fc.array(edit, { minLength: 1, maxLength: 6 })).map(([i, edits]) => {
    let text = seeds[i]
    for (const e of edits) {
      const lines = text.split('\n')
      const at = text.length === 0 ? 0 : e.a % (text.length + 1)
      switch (e.kind) {
        case 0:
          text = text.slice(0, at) + pick(YAML_TOKENS, e.b) + text.slice(at)
          break
        case 1:
          text = text.slice(0, at) + text.slice(at + 1 + (e.b % 20))
          break
        case 2:
          lines.splice(e.a % (lines.length + 1), 0, lines[e.b % lines.length])
          text = lines.join('\n')
          break
        case 3:
          lines.splice(e.a % lines.length, 1)
          text = lines.join('\n')
          break
        case 4:
          text = text.slice(0, at) + e.text + text.slice(at)
          break
        case 5: {
          const other = pick(seeds, e.b)
          text = text.slice(0, at) + other.slice(e.b % (other.length + 1))
          break
        }
        default:
          lines[e.a % lines.length] = lines[e.a % lines.length].replace(/: .*$/, ': ' + pick(YAML_TOKENS, e.b))
          text = lines.join('\n')
      }
      if (text.length > maxChars) text = text.slice(0, maxChars)
    }
    return enc.encode(text)
  })
  return fc.oneof(
    { arbitrary: mutated, weight: 16 },
    { arbitrary: fc.string({ maxLength: 256, unit: 'binary' }).map(s => enc.encode(s)), weight: 2 },
    { arbitrary: seedIndex.map(i => enc.encode(seeds[i])), weight: 1 }
  )
}
