/**
 * DHT index keys (protocols/README.md §6): a provider `provide()`s the CID of every
 * dimension value it matches, and a renter looks up the narrowest one its filters allow.
 *
 *   CID = CIDv1(raw 0x55, sha2-256(UTF-8 "idlegrid/v1/<dim>/<value>"))
 */

import { createHash } from 'node:crypto'
import { CID } from 'multiformats/cid'
import * as Digest from 'multiformats/hashes/digest'
import { toString as uint8ArrayToString } from 'uint8arrays/to-string'
import { INDEX_KEY_PREFIX } from '../../../protocols/ids.js'
import { gpuModelTokens } from '../gpu/gpu-model.js'
import type { CapabilityRecord } from '../../../protocols/capability.js'

export type IndexDimension = 'any' | 'gpu' | 'region' | 'residency' | 'vram' | 'dataset'

export interface IndexKey {
  dim: IndexDimension
  value: string
}

/**
 * VRAM bucket sizes in GiB. Only the large ones are index keys: nearly every GPU reaches
 * the small ones, so they would narrow nothing and cost every provider a DHT walk each.
 */
export const VRAM_BUCKETS_GB = [40, 48, 80, 141] as const
/** A provider provides at most this many index keys (bounds its DHT work). */
export const MAX_INDEX_KEYS = 96

const RAW_CODEC = 0x55
const SHA2_256 = 0x12

export function indexKeyText (key: IndexKey): string {
  return `${INDEX_KEY_PREFIX}${key.dim}/${key.value}`
}

/** The CID a provider provides and a renter looks up for `key`. */
export function indexCid (key: IndexKey): CID {
  const digest = new Uint8Array(createHash('sha256').update(indexKeyText(key)).digest())
  return CID.createV1(RAW_CODEC, Digest.create(SHA2_256, digest))
}

/**
 * Whether a GPU of `vramMib` counts for a bucket of `gb` GiB: at least 93 % of the nominal
 * size (cards report less than their marketing size), in integer arithmetic.
 */
export function vramAtLeast (vramMib: number, gb: number): boolean {
  return vramMib * 100 >= gb * 1024 * 93
}

/** Every bucket at or below a GPU's VRAM. */
export function vramBucketsFor (vramMib: number): number[] {
  return VRAM_BUCKETS_GB.filter(b => vramAtLeast(vramMib, b))
}

/** The bucket a renter asking for at least `gb` GiB looks up: the largest one <= gb. */
export function vramBucketFor (gb: number): number | undefined {
  return [...VRAM_BUCKETS_GB].reverse().find(b => b <= gb)
}

/**
 * GPU index values of a model key: its first match token (when it has at least two
 * characters) and its first two tokens, joined with '-' ("h100-80gb" → "h-100";
 * "rtx-4090" → "rtx", "rtx-4090"; "l40s" → "l-40"). A filter F matches a key K
 * (gpuModelMatches) only when F's tokens are a leading run of K's, so K provides the value
 * the renter looks up for F (`gpuIndexValue`): F's first one or two tokens. The index is
 * coarse on purpose (two keys per model); the records themselves are then filtered exactly.
 */
export function gpuIndexValues (modelKey: string): string[] {
  const tokens = gpuModelTokens(modelKey)
  const values: string[] = []
  if ((tokens[0] ?? '').length >= 2) values.push(tokens[0] as string)
  if (tokens.length >= 2) values.push(tokens.slice(0, 2).join('-'))
  return values
}

/** The GPU index value a renter looks up for a model filter, or undefined when it has none. */
export function gpuIndexValue (filter: string): string | undefined {
  const tokens = gpuModelTokens(filter)
  if (tokens.length === 0 || (tokens.length === 1 && (tokens[0] ?? '').length < 2)) return undefined
  return tokens.slice(0, 2).join('-')
}

/** Every index key a record's provider should provide, `any` first; at most MAX_INDEX_KEYS. */
export function recordIndexKeys (record: CapabilityRecord): IndexKey[] {
  const keys: IndexKey[] = [{ dim: 'any', value: 'all' }]
  const seen = new Set<string>(['any/all'])
  const add = (dim: IndexDimension, value: string): void => {
    const id = `${dim}/${value}`
    if (seen.has(id) || keys.length >= MAX_INDEX_KEYS) return
    seen.add(id)
    keys.push({ dim, value })
  }
  add('region', record.region)
  add('residency', record.residency)
  const maxVram = Math.max(0, ...record.gpus.map(g => g.vramMib))
  for (const b of vramBucketsFor(maxVram)) add('vram', String(b))
  for (const g of record.gpus) for (const v of gpuIndexValues(g.model)) add('gpu', v)
  for (const d of record.cachedDatasets) add('dataset', uint8ArrayToString(d, 'base16'))
  return keys
}
