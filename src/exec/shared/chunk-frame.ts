/**
 * InputChunk and OutputChunk frames without copying their file data. Bulk data is most of a
 * job stream, and each copy of it into a fresh buffer cost about as much as hashing it
 * (test/bench/transfer.bench.ts): the sender writes the frame's head (length prefix, tags,
 * path, offset, data length) and hands the data on as it is; the receiver takes the data as
 * the stream's pieces. The bytes on the wire are those of `lp.encode.single(JobFrame.encode())`
 * (test/exec/chunk-frame.spec.ts checks it); a frame in any other valid encoding is left to the
 * generic decoder.
 */
import { Uint8ArrayList } from 'uint8arraylist'
import { decodeBounded } from '../../../protocols/codec.js'
import { JobFrame } from '../../../protocols/job.js'

/** File data of a received chunk frame: the stream's pieces, not copied into one buffer. */
export type ChunkData = Uint8Array | Uint8ArrayList

/** An InputChunk or OutputChunk as received. */
export interface ReceivedChunk {
  path: string
  offset: bigint
  data: ChunkData
}

/** The buffers of `data`, in order. */
export function pieces (data: ChunkData): Iterable<Uint8Array> {
  return data instanceof Uint8Array ? [data] : data
}

export type ChunkKind = 'inputChunk' | 'outputChunk'

/** JobFrame's field number of each chunk member (protocols/job.proto). */
const FIELD: Record<ChunkKind, number> = { inputChunk: 2, outputChunk: 7 }
const WIRE_LEN = 2
const PATH_TAG = (1 << 3) | WIRE_LEN
const OFFSET_TAG = (2 << 3) | 0
const DATA_TAG = (3 << 3) | WIRE_LEN
/** Longest head read to find the data field: tags and lengths plus a path (<= 1024 chars, 4 bytes each). */
const MAX_HEAD_BYTES = 64 + 4 * 1024

const utf8 = new TextEncoder()

function varintLength (value: number | bigint): number {
  let n = 1
  for (let v = BigInt(value); v >= 0x80n; v >>= 7n) n++
  return n
}

function writeVarint (out: Uint8Array, at: number, value: number | bigint): number {
  let v = BigInt(value)
  while (v >= 0x80n) {
    out[at++] = Number(v & 0x7fn) | 0x80
    v >>= 7n
  }
  out[at++] = Number(v)
  return at
}

/**
 * The length-prefixed frame `{ [kind]: { path, offset, data } }` as two pieces, its head and
 * `data` itself, and the length of the frame without its prefix. Fields at their default
 * (empty path, offset 0, empty data) are left out, as the generated encoder does.
 */
export function encodeChunkFrame (
  kind: ChunkKind,
  path: string,
  offset: bigint,
  data: Uint8Array
): { framed: Uint8ArrayList, bodyBytes: number } {
  const pathBytes = utf8.encode(path)
  const inner = (pathBytes.byteLength > 0 ? 1 + varintLength(pathBytes.byteLength) + pathBytes.byteLength : 0) +
    (offset !== 0n ? 1 + varintLength(offset) : 0) +
    (data.byteLength > 0 ? 1 + varintLength(data.byteLength) + data.byteLength : 0)
  const body = 1 + varintLength(inner) + inner
  const head = new Uint8Array(varintLength(body) + body - data.byteLength)
  let at = writeVarint(head, 0, body)
  head[at++] = (FIELD[kind] << 3) | WIRE_LEN
  at = writeVarint(head, at, inner)
  if (pathBytes.byteLength > 0) {
    head[at++] = PATH_TAG
    at = writeVarint(head, at, pathBytes.byteLength)
    head.set(pathBytes, at)
    at += pathBytes.byteLength
  }
  if (offset !== 0n) {
    head[at++] = OFFSET_TAG
    at = writeVarint(head, at, offset)
  }
  if (data.byteLength > 0) {
    head[at++] = DATA_TAG
    writeVarint(head, at, data.byteLength)
  }
  return { framed: data.byteLength > 0 ? new Uint8ArrayList(head, data) : new Uint8ArrayList(head), bodyBytes: body }
}

/** A varint in `bytes` at `at` that fits a safe integer: [value, next position], or undefined. */
function readVarint (bytes: Uint8Array, at: number): [number, number] | undefined {
  let value = 0
  for (let shift = 0; shift < 49 && at < bytes.byteLength; shift += 7) {
    const b = bytes[at++] as number
    value += (b & 0x7f) * 2 ** shift
    if (b < 0x80) return [value, at]
  }
  return undefined
}

/** Pieces a chunk's data may stay in; more are copied into one buffer (hash and writev per piece). */
const MAX_PIECES = 1024

/**
 * `data` as it is, unless its pieces are many or keep much more memory alive than they hold
 * (small slices of large buffers, which a sender can cause by cutting its data into tiny muxer
 * frames): then one copy, so a queued chunk holds about its own size.
 */
function compactIfWasteful (data: Uint8ArrayList): ChunkData {
  let held = 0
  let pieces = 0
  let last: ArrayBufferLike | undefined
  for (const piece of data) {
    if (++pieces > MAX_PIECES) return data.subarray()
    if (piece.buffer !== last) { held += piece.buffer.byteLength; last = piece.buffer }
  }
  return held > 2 * data.byteLength + 64 * 1024 ? data.subarray() : data
}

/** The position after a varint of at most 10 bytes (a uint64), or undefined. */
function skipVarint (bytes: Uint8Array, at: number): number | undefined {
  for (let i = 0; i < 10 && at + i < bytes.byteLength; i++) {
    if ((bytes[at + i] as number) < 0x80) return at + i + 1
  }
  return undefined
}

/**
 * A length-prefix-stripped frame whose only member is a chunk with its data field last: the
 * chunk, with its path and offset decoded by the generated decoder (bounded, as every frame)
 * and its data as pieces of `frame`. Undefined for any other frame or layout: the caller
 * decodes those with the generic decoder, so the two always agree.
 */
export function decodeChunkFrame (
  frame: Uint8ArrayList,
  maxFrameBytes: number
): { kind: ChunkKind, chunk: ReceivedChunk } | undefined {
  if (frame.byteLength > maxFrameBytes || frame.byteLength < 2) return undefined
  const head = frame.subarray(0, Math.min(frame.byteLength, MAX_HEAD_BYTES))
  const kind = head[0] === ((FIELD.inputChunk << 3) | WIRE_LEN) ? 'inputChunk' : head[0] === ((FIELD.outputChunk << 3) | WIRE_LEN) ? 'outputChunk' : undefined
  if (kind == null) return undefined
  const length = readVarint(head, 1)
  if (length == null || length[1] + length[0] !== frame.byteLength) return undefined
  const innerStart = length[1]
  // walk the inner fields to the data field; anything unusual goes to the generic decoder
  let at = innerStart
  while (at < head.byteLength) {
    const tag = head[at]
    if (tag === DATA_TAG) {
      const len = readVarint(head, at + 1)
      if (len == null || len[0] === 0 || len[1] + len[0] !== frame.byteLength) return undefined
      const codec = kind === 'inputChunk' ? JobFrame.InputChunk : JobFrame.OutputChunk
      let meta: JobFrame.InputChunk
      try {
        meta = decodeBounded(codec, head.subarray(innerStart, at), 'job frame', maxFrameBytes)
      } catch {
        return undefined // the generic decoder says what is wrong with it
      }
      return {
        kind,
        chunk: {
          path: meta.path,
          offset: meta.offset,
          data: compactIfWasteful(frame.sublist(len[1], frame.byteLength))
        }
      }
    }
    if (tag === PATH_TAG) {
      const len = readVarint(head, at + 1)
      if (len == null) return undefined
      at = len[1] + len[0]
    } else if (tag === OFFSET_TAG) {
      const next = skipVarint(head, at + 1)
      if (next == null) return undefined
      at = next
    } else {
      return undefined
    }
  }
  return undefined
}
