import * as assert from 'node:assert/strict'
import protobuf from 'protobufjs'
import { decodeBounded, type WireDecoder } from '../../protocols/codec.js'
import * as capability from '../../protocols/capability.js'
import * as envelope from '../../protocols/envelope.js'
import * as heartbeat from '../../protocols/heartbeat.js'
import * as job from '../../protocols/job.js'
import * as kadProviders from '../../protocols/kad-providers.js'
import * as ledger from '../../protocols/ledger.js'
import * as market from '../../protocols/market.js'
import * as punch from '../../protocols/punch.js'
import * as serve from '../../protocols/serve.js'
import * as trust from '../../protocols/trust.js'
import * as usage from '../../protocols/usage.js'
import { loadProtoFiles, packableElement } from './proto-schema.js'
import { cat, lengthDelimited, splitFields, tag, varint } from './wire.js'

/** the generated module of each .proto file */
const MODULES: Record<string, Record<string, unknown>> = {
  'capability.proto': capability,
  'envelope.proto': envelope,
  'heartbeat.proto': heartbeat,
  'job.proto': job,
  'kad-providers.proto': kadProviders,
  'ledger.proto': ledger,
  'market.proto': market,
  'punch.proto': punch,
  'serve.proto': serve,
  'trust.proto': trust,
  'usage.proto': usage
}

type Decoder = WireDecoder<unknown>

/**
 * A message with every field set to a non-default value (first member of each oneof, two elements
 * per repeated field).
 */
function sample (type: protobuf.Type, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const oneofsSet = new Set<string>()
  for (const field of type.fieldsArray) {
    if (field.partOf != null) {
      if (oneofsSet.has(field.partOf.name)) continue
      if (field.resolvedType instanceof protobuf.Type && depth >= 3) continue
      oneofsSet.add(field.partOf.name)
    }
    const one = (): unknown => {
      if (field.resolvedType instanceof protobuf.Enum) {
        return Object.values(field.resolvedType.values).find(v => v !== 0)
      }
      if (field.resolvedType instanceof protobuf.Type) return depth >= 3 ? {} : sample(field.resolvedType, depth + 1)
      switch (field.type) {
        case 'string': return 'x'
        case 'bytes': return Uint8Array.of(1, 2)
        case 'bool': return true
        case 'float': case 'double': return 1.5
        default: return 5
      }
    }
    out[field.name] = field.repeated ? [one(), one()] : one()
  }
  return out
}

/** the message's bytes with explicit default values for every singular scalar field outside a oneof */
function explicitDefaults (type: protobuf.Type): Uint8Array {
  return cat(
    ...type.fieldsArray
      .filter(f => !f.repeated && f.partOf == null && !(f.resolvedType instanceof protobuf.Type))
      .map(f => {
        const element = packableElement(f)
        if (element === 'varint') return cat(tag(f.id, 0), varint(0))
        if (element === 'fixed32') return cat(tag(f.id, 5), new Uint8Array(4))
        if (element === 'fixed64') return cat(tag(f.id, 1), new Uint8Array(8))
        return lengthDelimited(f.id, new Uint8Array(0))
      })
  )
}

/** one unknown field of each wire type (field numbers no .proto uses) */
const UNKNOWN = cat(
  tag(1000, 0), varint(300),
  tag(1001, 1), new Uint8Array(8).fill(9),
  lengthDelimited(1002, Uint8Array.of(1, 2, 3)),
  tag(1003, 5), new Uint8Array(4).fill(9)
)

const cases: Array<{ name: string, type: protobuf.Type, codec: Decoder }> = []
for (const [file, root] of loadProtoFiles()) {
  for (const type of root.nestedArray.filter((n): n is protobuf.Type => n instanceof protobuf.Type)) {
    const codec = MODULES[file]?.[type.name] as Decoder | undefined
    if (codec?.decode == null) throw new Error(`no generated codec for ${file} ${type.name}`)
    cases.push({ name: type.name, type, codec })
  }
}

const decode = (codec: Decoder, bytes: Uint8Array): unknown => decodeBounded(codec, bytes, 'test message', 16 * 1024 * 1024)

describe('protocols: every valid encoding of every message decodes (issue 14)', () => {
  it('covers every top-level message of every .proto file', () => {
    assert.ok(cases.length >= 19, `found ${cases.length} messages`)
  })

  for (const { name, type, codec } of cases) {
    describe(name, () => {
      // a plain Uint8Array copy: protobufjs hands back a Buffer, and decoded bytes fields would be Buffers
      const bytes = Uint8Array.from(type.encode(type.fromObject(sample(type))).finish())
      const expected = (): unknown => decode(codec, bytes)

      it('a standard encoder\'s bytes decode to a populated message', () => {
        assert.notDeepEqual(expected(), decode(codec, new Uint8Array(0)), 'the sample sets fields')
      })

      it('fields in any order (reversed by field number, repeated elements kept in order) decode the same', () => {
        const fields = splitFields(bytes)
        assert.ok(fields.length > 0)
        const reversed = cat(
          ...fields
            .map((f, i) => ({ f, i }))
            .sort((a, b) => b.f.field - a.f.field || a.i - b.i)
            .map(x => x.f.bytes)
        )
        if (new Set(fields.map(f => f.field)).size > 1) assert.notDeepEqual(reversed, bytes, 'the order really changed')
        assert.deepEqual(decode(codec, reversed), expected())
      })

      it('unknown fields of every wire type, before, between and after, are skipped', () => {
        const fields = splitFields(bytes)
        const withUnknown = cat(UNKNOWN, ...fields.flatMap(f => [f.bytes, UNKNOWN]))
        assert.deepEqual(decode(codec, withUnknown), expected())
      })

      it('explicit default values decode as absent fields do', () => {
        const defaults = explicitDefaults(type)
        assert.deepEqual(decode(codec, defaults), decode(codec, new Uint8Array(0)))
      })
    })
  }
})
