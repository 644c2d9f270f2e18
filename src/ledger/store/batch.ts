/**
 * The LevelDB operations of one store batch (keys.ts): entries, hash index, heads with the
 * feed's byte count, fraud proofs and the slashed set, rooted standing grants. And the small
 * helpers the store shares with it.
 */

import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { peerIdFromString } from '@libp2p/peer-id'
import { decodeStoredBody } from '../entries/body.js'
import { parseAuthor, type FraudProof, type LedgerRecord } from '../entries/entry.js'
import { MalformedEntryError } from '../errors.js'
import { entryKey, hashKey, hashValue, headKey, headValue, proofKey, slashedKey, standingKey } from './keys.js'
import type { RootedGrant } from '../ingest/standing.js'
import type { VerifiedEntry } from '../ingest/verify.js'

export interface Head {
  author: Uint8Array
  authorId: string
  seq: number
  hash: Uint8Array
  /** stored envelope bytes of the feed */
  bytes: number
  /** the head entry's time: the next entry's may not be lower */
  time: number
  /** the head entry's chain: after a chain-2 entry only chain 2 follows */
  chain: 1 | 2
}

export interface SlashRecord {
  accused: string
  /** hash of the entry carrying the (first) fraud proof */
  proofEntry: Uint8Array
}

export interface BatchOp { type: 'put', key: Uint8Array, value: Uint8Array }

/** The puts of `batch`, and the heads and slashes it leaves once written. */
export function batchOps (batch: VerifiedEntry[], heldHead: (authorId: string) => Head | undefined, isSlashed: (authorId: string) => boolean, grants: RootedGrant[]): { ops: BatchOp[], heads: Map<string, Head>, slashes: Map<string, SlashRecord> } {
  const ops: BatchOp[] = []
  const heads = new Map<string, Head>()
  const slashes = new Map<string, SlashRecord>()
  for (const { record, slashes: proof } of batch) {
    ops.push({ type: 'put', key: entryKey(record.author, record.seq), value: record.envelope })
    ops.push({ type: 'put', key: hashKey(record.hash), value: hashValue(record.author, record.seq) })
    const bytes = ((heads.get(record.authorId) ?? heldHead(record.authorId))?.bytes ?? 0) + record.envelope.byteLength
    heads.set(record.authorId, { author: record.author, authorId: record.authorId, seq: record.seq, hash: record.hash, bytes, time: record.time, chain: record.chain })
    if (proof != null) {
      const body = decodeStoredBody(record)
      if (body.kind === 'fraud-proof') ops.push({ type: 'put', key: proofKey(body.proof.hash), value: record.hash })
      if (!isSlashed(proof.accused) && !slashes.has(proof.accused)) {
        ops.push({ type: 'put', key: slashedKey(proof.proof.accused), value: record.hash })
        slashes.set(proof.accused, { accused: proof.accused, proofEntry: record.hash })
      }
    }
  }
  for (const head of heads.values()) {
    ops.push({ type: 'put', key: headKey(head.author), value: headValue(head.seq, head.hash, head.bytes) })
  }
  for (const grant of grants) {
    ops.push({ type: 'put', key: standingKey(peerIdFromString(grant.authorId).toMultihash().bytes), value: Uint8Array.of(grant.depth) })
  }
  return { ops, heads, slashes }
}

export function decodeProof (record: LedgerRecord): FraudProof {
  const body = decodeStoredBody(record)
  if (body.kind !== 'fraud-proof') throw new MalformedEntryError('not a fraud proof entry')
  return body.proof.message
}

export function authorIdOf (author: Uint8Array): string {
  const parsed = parseAuthor(author)
  if (parsed == null) throw new MalformedEntryError('not an Ed25519 peer id')
  return parsed.id
}

export async function directorySize (dir: string): Promise<number> {
  let total = 0
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    total += await stat(join(dir, name)).then(s => s.isFile() ? s.size : 0, () => 0)
  }
  return total
}
