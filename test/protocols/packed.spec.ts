import * as assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { CapabilityRecord } from '../../protocols/capability.js'
import { decodeBounded, LIMITS, MAX_BYTES, WireDecodeError } from '../../protocols/codec.js'
import { loadProtoFiles } from './proto-schema.js'
import { cat, lengthDelimited, packedVarints, splitFields, tag, unpackedVarints, varint } from './wire.js'

const sha256 = (s: string): Uint8Array => new Uint8Array(createHash('sha256').update(s).digest())

const record: CapabilityRecord = {
  peerId: new Uint8Array(38).fill(7),
  sequence: 3n,
  issuedAt: 1_700_000_000_000n,
  expiresAt: 1_700_000_600_000n,
  gpus: [{ model: 'h100-80gb', vramMib: 81_559, count: 1, computeCapability: '9.0', driverVersion: '550', uuidHash: [sha256('GPU-1')], simulated: false }],
  region: 'eu-west',
  residency: 'eu',
  priceFloorMicroUsd: 1_500_000n,
  acceptedTiers: [CapabilityRecord.Tier.GOLD, CapabilityRecord.Tier.BRONZE],
  workloads: ['inference'],
  allowedImages: [],
  availability: [],
  timeZone: '',
  cachedDatasets: [],
  maxJobMinutes: 60,
  maxTemperatureC: 0,
  maxPowerWatts: 0,
  preemptionGraceMs: 30_000,
  listenAddrs: [],
  runner: 'process'
}

const decode = (bytes: Uint8Array): CapabilityRecord =>
  decodeBounded(CapabilityRecord, bytes, 'capability record', MAX_BYTES.capabilityRecord, LIMITS.capabilityRecord)

/** the record's bytes without field 9, and its tiers as numbers */
function withoutTiers (): Uint8Array {
  return cat(...splitFields(CapabilityRecord.encode(record)).filter(f => f.field !== 9).map(f => f.bytes))
}
/** GOLD and BRONZE as the wire numbers of capability.proto */
const tiers = [1, 3]

describe('protocols: packed and unpacked repeated scalars (issue 14)', () => {
  it('our encoder writes accepted_tiers unpacked, and that decodes', () => {
    const fields = splitFields(CapabilityRecord.encode(record)).filter(f => f.field === 9)
    assert.deepEqual(fields.map(f => f.wireType), [0, 0])
    assert.deepEqual(decode(CapabilityRecord.encode(record)).acceptedTiers, record.acceptedTiers)
  })

  it('a packed accepted_tiers decodes to the same record, wherever it sits among the fields', () => {
    const rest = withoutTiers()
    for (const bytes of [cat(rest, packedVarints(9, tiers)), cat(packedVarints(9, tiers), rest)]) {
      assert.deepEqual(decode(bytes), record)
    }
    // split into two runs, and a packed run mixed with unpacked elements: all one list, in order
    const [first, second] = tiers
    assert.deepEqual(decode(cat(packedVarints(9, [first]), rest, packedVarints(9, [second]))), record)
    assert.deepEqual(decode(cat(unpackedVarints(9, [first]), rest, packedVarints(9, [second]))), record)
  })

  it("protobufjs's proto3 encoding (packed by default) of the record decodes to the same record", () => {
    const type = loadProtoFiles().get('capability.proto')?.lookupType('CapabilityRecord')
    assert.ok(type != null)
    const bytes = type.encode(type.decode(CapabilityRecord.encode(record))).finish()
    const tierFields = splitFields(bytes).filter(f => f.field === 9)
    assert.deepEqual(tierFields.map(f => f.wireType), [2], 'protobufjs writes accepted_tiers as one packed run')
    assert.deepEqual(decode(bytes), record)
  })

  it('an empty packed run is an empty list; elements beyond the limit are refused as for unpacked', () => {
    assert.deepEqual(decode(cat(withoutTiers(), lengthDelimited(9, new Uint8Array(0)))).acceptedTiers, [])
    const four = [1, 2, 3, 1]
    for (const bytes of [cat(withoutTiers(), packedVarints(9, four)), cat(withoutTiers(), unpackedVarints(9, four))]) {
      assert.throws(() => decode(bytes), (err: unknown) => err instanceof WireDecodeError && err.reason === 'malformed' && /acceptedTiers/.test(err.message))
    }
  })

  it('a packed run that ends inside a varint, or a field running past the message, is malformed', () => {
    const cut = cat(withoutTiers(), tag(9, 2), varint(2), Uint8Array.of(0x81, 0x81))
    const past = cat(withoutTiers(), tag(9, 2), varint(5), Uint8Array.of(1))
    for (const bytes of [cut, past]) {
      assert.throws(() => decode(bytes), (err: unknown) => err instanceof WireDecodeError && err.reason === 'malformed')
    }
  })

  it('unknown fields of every wire type, groups included, are skipped beside a packed run', () => {
    const unknown = cat(
      tag(900, 0), varint(5),
      tag(901, 1), new Uint8Array(8),
      lengthDelimited(902, Uint8Array.of(1, 2, 3)),
      tag(903, 5), new Uint8Array(4),
      tag(904, 3), tag(1, 0), varint(1), tag(904, 4)
    )
    assert.deepEqual(decode(cat(unknown, withoutTiers(), packedVarints(9, tiers), unknown)), record)
    // a group closed by another field's end tag is not a message
    const badGroup = cat(withoutTiers(), packedVarints(9, tiers), tag(904, 3), tag(905, 4))
    assert.throws(() => decode(badGroup), (err: unknown) => err instanceof WireDecodeError && err.reason === 'malformed')
  })

  it('the rewrite leaves messages without a packed run untouched (same array)', async () => {
    const { unpackRepeated } = await import('../../protocols/normalise.js')
    const bytes = CapabilityRecord.encode(record)
    assert.equal(unpackRepeated(bytes, { 9: 'varint' }), bytes)
  })
})
