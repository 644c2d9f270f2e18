/**
 * The LevelDB operations of one store batch, each from the repository of its key prefix
 * (repositories.ts): entries, hash index, heads with the feed's byte count, fraud proofs and
 * the slashed set, rooted standing grants.
 */

import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { decodeStoredBody } from '../entries/body.js'
import type { FraudProof, LedgerRecord } from '../entries/entry.js'
import type { EntryRepository, HashIndex, HeadRepository, ProofRepository, PutOp, SlashedRepository, StandingRepository } from './repositories.js'

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
  /**
   * the first seq of the feed held: 1, or later once entries older than the retention horizon
   * were dropped here or the feed was pulled from a holder that dropped them (README §7 "Retention")
   */
  base: number
}

export interface SlashRecord {
  accused: string
  /** hash of the entry carrying the (first) fraud proof */
  proofEntry: Uint8Array
}

/** An entry to store: checked already (ingest/), with the author it slashes when it carries a verified fraud proof. */
export interface EntryToStore {
  record: LedgerRecord
  slashes?: { accused: string, proof: FraudProof }
  /** the feed starts anew at this entry (a range's retention base): what was held before it is dropped */
  base?: boolean
}

export interface Repositories {
  entries: EntryRepository
  heads: HeadRepository
  hashes: HashIndex
  slashed: SlashedRepository
  proofs: ProofRepository
  standing: StandingRepository
}

export interface BatchContext {
  repos: Repositories
  /** the head held before this batch */
  heldHead: (authorId: string) => Head | undefined
  /** slashed before this batch */
  isSlashed: (authorId: string) => boolean
}

/** The puts of `batch` and `grants`, and the heads and slashes they leave once written. */
export function batchOps (
  batch: readonly EntryToStore[],
  grants: ReadonlyArray<{ authorId: string, depth: number }>,
  ctx: BatchContext
): { ops: PutOp[], heads: Map<string, Head>, slashes: Map<string, SlashRecord> } {
  const { repos } = ctx
  const ops: PutOp[] = []
  const heads = new Map<string, Head>()
  const slashes = new Map<string, SlashRecord>()
  for (const { record, slashes: proof, base } of batch) {
    ops.push(repos.entries.put(record))
    ops.push(repos.hashes.put(record))
    heads.set(record.authorId, nextHead(heads.get(record.authorId) ?? ctx.heldHead(record.authorId), { record, base }))
    if (proof != null) {
      const body = decodeStoredBody(record)
      if (body.kind === 'fraud-proof') ops.push(repos.proofs.put(body.proof.hash, record.hash))
      if (!ctx.isSlashed(proof.accused) && !slashes.has(proof.accused)) {
        ops.push(repos.slashed.put(proof.proof.accused, record.hash))
        slashes.set(proof.accused, { accused: proof.accused, proofEntry: record.hash })
      }
    }
  }
  for (const head of heads.values()) ops.push(repos.heads.put(head))
  for (const grant of grants) ops.push(repos.standing.put(grant))
  return { ops, heads, slashes }
}

/**
 * The head a feed has once `record` follows `before` (its held or staged head): a base entry
 * starts the count of the feed's bytes and its base anew.
 */
export function nextHead (before: Head | undefined, { record, base }: EntryToStore): Head {
  const fresh = base === true || before == null
  return {
    // a copy once per feed: the record's author is a view into the buffer the entry came in (a
    // sync's whole response), which a head kept for good would keep too
    author: before?.author ?? new Uint8Array(record.author),
    authorId: record.authorId,
    seq: record.seq,
    hash: record.hash,
    bytes: (fresh ? 0 : before.bytes) + record.envelope.byteLength,
    time: record.time,
    chain: record.chain,
    base: fresh ? record.seq : before.base
  }
}

export async function directorySize (dir: string): Promise<number> {
  let total = 0
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    total += await stat(join(dir, name)).then(s => s.isFile() ? s.size : 0, () => 0)
  }
  return total
}
