/**
 * Rewrites a received message into an encoding protons' generated decoders read right,
 * without changing what it means (protobuf encoding spec). `decodeBounded` runs it on every
 * message before decoding; signatures and hashes are never computed over its output.
 *
 * - Packed repeated scalars become unpacked elements (packed.ts).
 * - A non-repeated message field sent more than once is merged: protobuf parses the later
 *   occurrences into the earlier one, which equals parsing the concatenation of their bytes;
 *   protons keeps only the last. The occurrences become one field, at the last one's place,
 *   holding their concatenated bytes (itself normalised, so nested duplicates merge too).
 *   The merged field is never longer than the occurrences it replaces.
 * - In a oneof, a member is dropped when another member follows it: protobuf clears the oneof
 *   there, so the last member seen wins (protons would keep the highest-numbered one).
 * - Every length prefix, at every depth the schema knows, must stay inside its message:
 *   protons reads lengths as uint32, so 2^32 + 5 would be taken for 5.
 * Scalars sent twice need nothing: protons keeps the last, as protobuf does.
 *
 * WIRE_SHAPES holds what this needs of each message; a test (test/protocols/normalise.spec.ts)
 * derives the shapes from the .proto files with protobufjs and fails when one differs.
 */

import { CapabilityRecord } from './capability.js'
import { Heartbeat } from './heartbeat.js'
import { Attestation, JobFrame } from './job.js'
import { SyncRequest, SyncResponse } from './ledger.js'
import { Award, JobRequest } from './market.js'
import { ServeFrame } from './serve.js'
import { UsageFrame } from './usage.js'
import { KadMessage } from './kad-providers.js'
import { concat, encodeVarint, expandRun, readTag, readVarint, skipValue, WIRE, type PackedElement, type Tag } from './packed.js'

/** What the normaliser must know of one message type; fields by number. */
export interface MessageShape {
  /** repeated scalar and enum fields (packable) */
  readonly packed?: Readonly<Record<number, PackedElement>>
  /** non-repeated message-typed fields: their occurrences are merged */
  readonly merged?: Readonly<Record<number, MessageShape>>
  /** repeated message-typed fields: each element normalised on its own */
  readonly repeated?: Readonly<Record<number, MessageShape>>
  /** each oneof (by name) with its member fields, scalar members included */
  readonly oneofs?: Readonly<Record<string, readonly number[]>>
}

/** a message with no packed or message-typed fields: only its lengths are checked */
const LEAF: MessageShape = {}

const RUNTIME: MessageShape = { repeated: { 3: LEAF } }
const START: MessageShape = { merged: { 3: RUNTIME }, repeated: { 4: LEAF } }
const RESULT: MessageShape = { repeated: { 3: LEAF } }
const JOB_FRAME: MessageShape = {
  // 14: Held, whose digests are bytes (nothing to pack)
  merged: {
    1: START,
    2: LEAF,
    3: LEAF,
    4: LEAF,
    5: LEAF,
    6: LEAF,
    7: LEAF,
    8: RESULT,
    11: LEAF,
    12: LEAF,
    13: LEAF,
    14: LEAF
  },
  oneofs: { frame: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14] }
}
const RESPONSE_HEADS: MessageShape = { repeated: { 1: LEAF } }
const RANGES: MessageShape = { repeated: { 1: LEAF } }
const SERVE_REQUEST: MessageShape = { repeated: { 4: LEAF } }
const SERVE_RESPONSE: MessageShape = { repeated: { 2: LEAF } }
const SERVE_FRAME: MessageShape = {
  merged: { 1: SERVE_REQUEST, 2: LEAF, 3: LEAF, 4: SERVE_RESPONSE, 5: LEAF },
  oneofs: { frame: [1, 2, 3, 4, 5] }
}

/** Shapes of the decoders that have packed or message-typed fields; any other decoder is a LEAF. */
export const WIRE_SHAPES: ReadonlyMap<unknown, MessageShape> = new Map<unknown, MessageShape>([
  // accepted_tiers: repeated Tier; gpus, availability: repeated messages
  [CapabilityRecord, { packed: { 9: 'varint' }, repeated: { 5: LEAF, 12: LEAF } }],
  [JobFrame, JOB_FRAME],
  [JobFrame.Start, START],
  [JobFrame.Runtime, RUNTIME],
  [JobFrame.Result, RESULT],
  // gpu, telemetry: merged messages; gpus: repeated GpuFingerprint
  [Attestation, { merged: { 10: LEAF, 11: LEAF }, repeated: { 14: LEAF } }],
  // ranges: a message of repeated Range (SyncRequest) or Entries (SyncResponse)
  [SyncRequest, { merged: { 1: LEAF, 2: LEAF, 3: RANGES }, oneofs: { request: [1, 2, 3] } }],
  [SyncResponse, { merged: { 1: RESPONSE_HEADS, 2: LEAF, 3: RANGES }, oneofs: { response: [1, 2, 3] } }],
  [SyncResponse.Heads, RESPONSE_HEADS],
  [SyncRequest.Ranges, RANGES],
  [SyncResponse.Ranges, RANGES],
  [JobRequest, { merged: { 7: LEAF, 15: LEAF } }],
  [Award, { repeated: { 15: LEAF } }],
  [ServeFrame, SERVE_FRAME],
  [ServeFrame.Request, SERVE_REQUEST],
  [ServeFrame.Response, SERVE_RESPONSE],
  [UsageFrame, { merged: { 1: LEAF, 2: LEAF, 3: LEAF, 4: LEAF, 5: LEAF }, oneofs: { frame: [1, 2, 3, 4, 5] } }],
  // closer_peers, provider_peers: repeated Peer (whose addrs are bytes: nothing to pack)
  [KadMessage, { repeated: { 8: LEAF, 9: LEAF } }],
  // relayed_heads: repeated FeedHead (author bytes, seq: nothing to pack)
  [Heartbeat, { repeated: { 8: LEAF } }]
])

export function shapeOf (decoder: unknown): MessageShape {
  return WIRE_SHAPES.get(decoder) ?? LEAF
}

interface Edit { start: number, end: number, replacement: Uint8Array }
interface Occurrence { start: number, end: number, payload: Uint8Array }

const NOTHING = new Uint8Array(0)

/**
 * `bytes` normalised for protons (see above); the same array when nothing changes. Throws
 * Error on bytes that are not a protobuf message of this shape.
 */
export function normalise (bytes: Uint8Array, shape: MessageShape): Uint8Array {
  // most messages decoded are leaves (envelopes, entries): only their lengths need checking,
  // and that walk allocates nothing (ledger sync decodes several messages per entry)
  if (shape.packed == null && shape.merged == null && shape.repeated == null && shape.oneofs == null) {
    checkLengths(bytes)
    return bytes
  }
  const edits: Edit[] = []
  let groups: Map<number, Occurrence[]> | undefined
  let liveMember: Map<string, { field: number, occurrences: Occurrence[] }> | undefined
  const oneofs = oneofIndex(shape)
  const tag: Tag = { field: 0, wireType: 0, end: 0 }
  let pos = 0
  while (pos < bytes.byteLength) {
    const start = pos
    const { field, wireType, end: afterTag } = readTag(bytes, pos, tag)
    pos = skipValue(bytes, afterTag, wireType, field)
    const oneof = oneofs?.get(field)
    if (oneof != null) {
      liveMember ??= new Map()
      let live = liveMember.get(oneof)
      if (live != null && live.field !== field) {
        // protobuf clears the oneof when another member arrives: what came before is gone
        // (protons instead keeps the member with the highest field number)
        for (const o of live.occurrences) edits.push({ start: o.start, end: o.end, replacement: NOTHING })
        groups?.delete(live.field)
        live = undefined
      }
      if (live == null) liveMember.set(oneof, live = { field, occurrences: [] })
      live.occurrences.push({ start, end: pos, payload: NOTHING })
    }
    if (wireType !== WIRE.bytes) continue
    const packed = shape.packed?.[field]
    const merged = shape.merged?.[field]
    const repeated = shape.repeated?.[field]
    if (packed == null && merged == null && repeated == null) continue
    const payload = bytes.subarray(readVarint(bytes, afterTag)[1], pos)
    if (packed != null) {
      edits.push({ start, end: pos, replacement: expandRun(payload, field, packed) })
    } else if (merged != null) {
      groups ??= new Map()
      const group = groups.get(field) ?? []
      group.push({ start, end: pos, payload })
      groups.set(field, group)
    } else if (repeated != null) {
      const inner = normalise(payload, repeated)
      if (inner !== payload) edits.push({ start, end: pos, replacement: lengthDelimited(field, inner) })
    }
  }
  if (groups != null) {
    for (const [field, occurrences] of groups) mergeOccurrences(field, occurrences, shape.merged![field], edits)
  }
  return applyEdits(bytes, edits)
}

/** Walks every field of `bytes`: throws where a tag or a length does not fit (as normalise does). */
function checkLengths (bytes: Uint8Array): void {
  const tag: Tag = { field: 0, wireType: 0, end: 0 }
  let pos = 0
  while (pos < bytes.byteLength) {
    const { field, wireType, end: afterTag } = readTag(bytes, pos, tag)
    pos = skipValue(bytes, afterTag, wireType, field)
  }
}

/** One field in place of the last occurrence, holding all their bytes; the others removed. */
function mergeOccurrences (field: number, occurrences: Occurrence[], shape: MessageShape, edits: Edit[]): void {
  const payload = occurrences.length === 1 ? occurrences[0].payload : concat(occurrences.map(o => o.payload))
  const inner = normalise(payload, shape)
  if (occurrences.length === 1 && inner === payload) return
  const last = occurrences[occurrences.length - 1]
  for (const o of occurrences.slice(0, -1)) edits.push({ start: o.start, end: o.end, replacement: NOTHING })
  edits.push({ start: last.start, end: last.end, replacement: lengthDelimited(field, inner) })
}

function applyEdits (bytes: Uint8Array, edits: Edit[]): Uint8Array {
  if (edits.length === 0) return bytes
  edits.sort((a, b) => a.start - b.start)
  const parts: Uint8Array[] = []
  let copiedUpTo = 0
  for (const edit of edits) {
    parts.push(bytes.subarray(copiedUpTo, edit.start), edit.replacement)
    copiedUpTo = edit.end
  }
  parts.push(bytes.subarray(copiedUpTo))
  return concat(parts)
}

function lengthDelimited (field: number, payload: Uint8Array): Uint8Array {
  return concat([
    encodeVarint((BigInt(field) << 3n) | BigInt(WIRE.bytes)),
    encodeVarint(BigInt(payload.byteLength)),
    payload
  ])
}

const ONEOF_INDEX = new WeakMap<MessageShape, ReadonlyMap<number, string>>()

/** the oneof (by name) of each oneof member, indexed once per shape, as it is looked up per field */
function oneofIndex (shape: MessageShape): ReadonlyMap<number, string> | undefined {
  if (shape.oneofs == null) return undefined
  let index = ONEOF_INDEX.get(shape)
  if (index == null) {
    index = new Map(Object.entries(shape.oneofs).flatMap(([name, members]) => members.map(m => [m, name] as const)))
    ONEOF_INDEX.set(shape, index)
  }
  return index
}

/** Packed runs of `fields` rewritten unpacked (the packed part of `normalise` alone). */
export function unpackRepeated (bytes: Uint8Array, fields: Readonly<Record<number, PackedElement>>): Uint8Array {
  return normalise(bytes, { packed: fields })
}
