import * as assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import protobuf from 'protobufjs'
import * as capability from '../../protocols/capability.js'
import { decodeBounded, LIMITS, MAX_BYTES, WireDecodeError } from '../../protocols/codec.js'
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
import { normalise, WIRE_SHAPES, type MessageShape } from '../../protocols/normalise.js'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { isEnvelopeError, openEnvelope, sealEnvelope } from '../../src/identity/index.js'
import { repoRoot } from '../fuzz/vectors.js'
import { recordAttack } from '../utils/index.js'
import { allTypes, loadProtoFiles, packableElement } from './proto-schema.js'
import { parseMerged } from './vectors/independent-parse.js'
import { cat, lengthDelimited, tag, varint } from './wire.js'

const MODULES: Record<string, any> = { 'capability.proto': capability, 'envelope.proto': envelope, 'heartbeat.proto': heartbeat, 'job.proto': job, 'kad-providers.proto': kadProviders, 'ledger.proto': ledger, 'market.proto': market, 'punch.proto': punch, 'serve.proto': serve, 'trust.proto': trust, 'usage.proto': usage }

/** the shape normalise.ts needs of `type`, read off the schema */
function derive (type: protobuf.Type): MessageShape {
  const shape: Record<string, Record<string, unknown>> = {}
  const put = (kind: string, key: string | number, value: unknown): void => { (shape[kind] ??= {})[key] = value }
  for (const field of type.fieldsArray) {
    const element = packableElement(field)
    if (field.resolvedType instanceof protobuf.Type) put(field.repeated ? 'repeated' : 'merged', field.id, derive(field.resolvedType))
    else if (field.repeated && element != null) put('packed', field.id, element)
  }
  // proto3 `optional` makes a one-field oneof named "_field": not a oneof on the wire
  for (const oneof of type.oneofsArray.filter(o => !(o.fieldsArray.length === 1 && o.name === `_${o.fieldsArray[0].name}`))) {
    put('oneofs', oneof.name, oneof.fieldsArray.map(f => f.id))
  }
  return shape
}

const jobRequestType = loadProtoFiles().get('market.proto')!.lookupType('JobRequest')
const jobFrameType = loadProtoFiles().get('job.proto')!.lookupType('JobFrame')
const decodeRequest = (bytes: Uint8Array): market.JobRequest => decodeBounded(market.JobRequest, bytes, 'job request', MAX_BYTES.jobRequest, LIMITS.jobRequest)
const decodeFrame = (bytes: Uint8Array): job.JobFrame => decodeBounded(job.JobFrame, bytes, 'frame', MAX_BYTES.jobFrame, LIMITS.jobFrame)
const malformed = (err: unknown): boolean => err instanceof WireDecodeError && err.reason === 'malformed'
const text = (s: string): Uint8Array => new TextEncoder().encode(s)

describe('protocols: a message field sent twice is merged; lengths stay inside the message (issue 14)', () => {
  it('WIRE_SHAPES gives every message type with packed or message-typed fields its shape from the .proto files', () => {
    let checked = 0
    for (const [file, root] of loadProtoFiles()) {
      for (const type of allTypes(root)) {
        const expected = derive(type)
        const codec = type.fullName.slice(1).split('.').reduce((ns: any, name) => ns?.[name], MODULES[file])
        assert.ok(codec?.decode != null, `a protons codec for ${type.fullName}`)
        if (Object.keys(expected).length === 0) {
          assert.ok(!WIRE_SHAPES.has(codec) || Object.keys(WIRE_SHAPES.get(codec)!).length === 0, `${type.fullName} needs no shape`)
          continue
        }
        assert.deepEqual(WIRE_SHAPES.get(codec), expected, `${type.fullName}'s shape`)
        checked++
      }
    }
    assert.ok(checked >= 8, `${checked} shapes checked`)
  })

  it('JobRequest.constraints twice with different fields set: both fields present, as protobuf parsing merges them', () => {
    const base = market.JobRequest.encode({ ...emptyRequest(), constraints: undefined })
    const first = lengthDelimited(7, market.JobRequest.Constraints.encode({ minVramMib: 24_000, gpuModels: ['rtx-4090'], regions: [], residency: '', maxPriceMicroUsd: 0n, maxLatencyMs: 0 }))
    const second = lengthDelimited(7, market.JobRequest.Constraints.encode({ minVramMib: 0, gpuModels: ['h100-80gb'], regions: ['eu-west'], residency: 'eu', maxPriceMicroUsd: 0n, maxLatencyMs: 0 }))
    const bytes = cat(first, base, second)
    const got = decodeRequest(bytes).constraints
    assert.deepEqual({ minVramMib: got?.minVramMib, gpuModels: got?.gpuModels, regions: got?.regions, residency: got?.residency }, { minVramMib: 24_000, gpuModels: ['rtx-4090', 'h100-80gb'], regions: ['eu-west'], residency: 'eu' })
    // the same meaning an independent merge of protobufjs's per-field decoding gives
    const independent = jobRequestType.toObject(parseMerged(jobRequestType, bytes), { longs: String, defaults: true })
    const c = independent.constraints
    assert.deepEqual({ minVramMib: c.min_vram_mib, gpuModels: c.gpu_models, regions: c.regions, residency: c.residency }, { minVramMib: 24_000, gpuModels: ['rtx-4090', 'h100-80gb'], regions: ['eu-west'], residency: 'eu' })
    // a scalar set in both: the later wins
    const again = lengthDelimited(7, cat(tag(1, 0), varint(8)))
    assert.equal(decodeRequest(cat(bytes, again)).constraints?.minVramMib, 8)
  })

  it('protobufjs-encoded duplicates of Start, nested Runtime included, merge into one Start', () => {
    const startA = jobFrameType.encode({ start: { award: Uint8Array.of(1), runtime: { image: 'img', command: ['python3'] }, inputs: [{ path: 'a' }] } }).finish()
    const startB = jobFrameType.encode({ start: { runtime: { command: ['run.py'], timeout_ms: 5 }, inputs: [{ path: 'b' }] } }).finish()
    const frame = decodeFrame(cat(startA, startB))
    assert.deepEqual(frame.start?.award, Uint8Array.of(1))
    assert.deepEqual(frame.start?.runtime, { image: 'img', command: ['python3', 'run.py'], env: [], timeoutMs: 5n, shmSizeMib: 0 })
    assert.deepEqual(frame.start?.inputs.map(i => i.path), ['a', 'b'])
    const independent = jobFrameType.toObject(parseMerged(jobFrameType, cat(startA, startB)), { longs: String })
    assert.deepEqual(independent.start.runtime, { image: 'img', command: ['python3', 'run.py'], timeout_ms: '5' })
  })

  it('another oneof member clears the oneof: the last member seen wins, whatever its field number', () => {
    const startA = job.JobFrame.encode({
      start: { award: Uint8Array.of(1), jobRequest: new Uint8Array(0), inputs: [] }
    })
    const startB = job.JobFrame.encode({
      start: { jobRequest: Uint8Array.of(2), award: new Uint8Array(0), inputs: [] }
    })
    const inputEnd = job.JobFrame.encode({ inputEnd: {} })
    const frame = decodeFrame(cat(startA, inputEnd, startB))
    assert.ok((frame.start?.award ?? new Uint8Array(0)).byteLength === 0, 'the Start before input_end was cleared')
    assert.deepEqual(frame.start?.jobRequest, Uint8Array.of(2))
    assert.equal(frame.inputEnd, undefined)
    const last = decodeFrame(cat(startA, startB, inputEnd))
    assert.deepEqual({ start: last.start, inputEnd: last.inputEnd }, { start: undefined, inputEnd: {} })
    // protons alone keeps the highest-numbered member (accepted = 4) whatever the order
    const acceptedThenEnd = cat(job.JobFrame.encode({ accepted: { at: 1n } }), inputEnd)
    assert.deepEqual(job.JobFrame.decode(acceptedThenEnd), { accepted: { at: 1n } })
    assert.deepEqual(decodeFrame(acceptedThenEnd), { inputEnd: {} })
    assert.deepEqual(jobFrameType.toObject(parseMerged(jobFrameType, acceptedThenEnd), { oneofs: true }), { input_end: {}, frame: 'input_end' })
  })

  it('limits count the merged message: 1,025 SyncResponse entries split over two fields are refused', () => {
    const entries = (n: number): Uint8Array =>
      lengthDelimited(2, cat(...Array.from({ length: n }, () => lengthDelimited(1, new Uint8Array(0)))))
    const decode = (b: Uint8Array): ledger.SyncResponse => decodeBounded(ledger.SyncResponse, b, 'sync response', MAX_BYTES.syncResponse, LIMITS.syncResponse)
    assert.equal(decode(cat(entries(1000), entries(24))).entries?.entries.length, 1024)
    assert.throws(() => decode(cat(entries(1000), entries(25))), (err: unknown) => malformed(err) && /entries/.test((err as Error).message))
  })

  it('the rewrite never grows a message that has no packed run, however it is split', () => {
    const field = cat(tag(1, 0), varint(300), lengthDelimited(4, text('x'.repeat(120))))
    for (const n of [2, 3, 50, 129]) {
      const bytes = cat(...Array.from({ length: n }, () => lengthDelimited(7, field)))
      const out = normalise(bytes, WIRE_SHAPES.get(market.JobRequest)!)
      assert.ok(out.byteLength <= bytes.byteLength, `${n} occurrences: ${out.byteLength} <= ${bytes.byteLength}`)
    }
  })

  it('a length prefix of 2^32 + 5 (protons alone reads 5) or a tag beyond 32 bits is malformed, at the top and nested', () => {
    const kept = new Uint8Array(Buffer.from(readFileSync(`${repoRoot()}/test/fuzz/corpus/decode__SignedEnvelope/38345f4e46c65dd5.hex`, 'utf8').trim(), 'hex'))
    assert.deepEqual(envelope.SignedEnvelope.decode(kept).payload, Uint8Array.of(1, 2, 3, 4, 5), 'protons on its own truncates the length')
    assert.throws(() => decodeBounded(envelope.SignedEnvelope, kept, 'envelope', MAX_BYTES.signedEnvelope), malformed)
    const long = (field: number, body: Uint8Array): Uint8Array =>
      cat(tag(field, 2), varint(2n ** 32n + BigInt(body.byteLength)), body)
    const nested = lengthDelimited(7, long(4, text('eu')))
    assert.throws(() => decodeRequest(nested), malformed)
    const bid = cat(long(1, Uint8Array.of(9)))
    assert.throws(() => decodeBounded(market.Bid, bid, 'bid', MAX_BYTES.bid), malformed)
    // one past the end, and 2^32 - 1
    assert.throws(() => decodeRequest(cat(tag(2, 2), varint(3), text('ab'))), malformed)
    assert.throws(() => decodeRequest(cat(tag(2, 2), varint(2n ** 32n - 1n), text('ab'))), malformed)
    // a tag of 2^32 + 16 (as 32 bits: field 2, varint); field numbers end below 2^29
    const bigTag = cat(varint(2n ** 32n + 16n), varint(1))
    assert.throws(() => decodeBounded(market.Bid, bigTag, 'bid', MAX_BYTES.bid), malformed)
  })

  it('red team: an envelope whose payload length is 2^k + its real length is refused, and the honest one still opens', async () => {
    const key = await generateKeyPair('Ed25519')
    const honest = sealEnvelope(key, peerIdFromPrivateKey(key), 'heartbeat', Uint8Array.of(8, 2, 16, 7))
    const env = envelope.SignedEnvelope.decode(honest)
    const withLength = (length: bigint): Uint8Array =>
      cat(
        lengthDelimited(1, text(env.domain)),
        lengthDelimited(2, env.signer),
        tag(3, 2),
        varint(length),
        env.payload,
        lengthDelimited(4, env.signature)
      )
    const lies = [32n, 33n, 40n, 63n].map(k => withLength(2n ** k + BigInt(env.payload.byteLength)))
    let accepted = 0
    for (const bytes of lies) {
      try {
        openEnvelope(bytes, { domain: 'heartbeat' })
        accepted++
      } catch (err) {
        assert.ok(isEnvelopeError(err) && err.reason === 'malformed', String(err))
      }
    }
    recordAttack({ issue: '14.1', attack: 'signed envelope with its payload length written as 2^k + n (k = 32, 33, 40, 63): protons alone reads n', got: `${accepted} of ${lies.length} accepted`, limit: 'a length past its message is malformed' })
    assert.equal(accepted, 0)
    assert.deepEqual(openEnvelope(withLength(BigInt(env.payload.byteLength)), { domain: 'heartbeat' }).payload, env.payload)
  })
})

function emptyRequest (): market.JobRequest {
  return market.JobRequest.decode(new Uint8Array(0))
}
