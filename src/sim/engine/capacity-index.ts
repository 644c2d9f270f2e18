/**
 * Which providers could take a job right now, without asking all of them: providers are kept
 * in sets keyed by "any", residency zone, GPU model and model+zone, one family of sets for
 * free slots and one for displaceable (bronze) slots. The auction samples its candidates from
 * the right set; they still decide for themselves (market/provider/bid-declines.ts, bid-engine.ts). Add, remove
 * and sample are O(1).
 */

import type { Rng } from '../model/rng.js'

class IndexedSet {
  readonly items: number[] = []
  /** position of each provider in items, -1 when absent (grows as needed) */
  private pos = new Int32Array(0)

  has (p: number): boolean { return p < this.pos.length && (this.pos[p] as number) >= 0 }

  add (p: number): void {
    if (p >= this.pos.length) {
      const grown = new Int32Array(Math.max(p + 1, this.pos.length * 2)).fill(-1)
      grown.set(this.pos)
      this.pos = grown
    }
    if ((this.pos[p] as number) >= 0) return
    this.pos[p] = this.items.length
    this.items.push(p)
  }

  delete (p: number): void {
    if (!this.has(p)) return
    const i = this.pos[p] as number
    const last = this.items.pop() as number
    this.pos[p] = -1
    if (last !== p) { this.items[i] = last; this.pos[last] = i }
  }
}

export function indexKeys (modelKey: string, residency: string): string[] {
  return ['*', `r:${residency}`, `m:${modelKey}`, `m:${modelKey}|r:${residency}`]
}

/** The keys to sample from for a job's model list (empty: any) and residency ('' : any). */
export function jobKeys (models: readonly string[], residency: string): string[] {
  if (models.length === 0) return [residency === '' ? '*' : `r:${residency}`]
  return models.map(m => residency === '' ? `m:${m}` : `m:${m}|r:${residency}`)
}

export class CapacityIndex {
  private readonly sets = new Map<string, IndexedSet>()
  /** per provider: whether it is in its sets now (1) or not (0), and the sets it is filed under */
  private member = new Uint8Array(0)
  private readonly setsOf: IndexedSet[][] = []

  private set (key: string): IndexedSet {
    let s = this.sets.get(key)
    if (s == null) this.sets.set(key, s = new IndexedSet())
    return s
  }

  /**
   * Puts provider `p` in or out of the sets under `keys` (always the same keys for one provider).
   * Most calls change nothing (a run ended on a provider that still has a free slot): they cost
   * one array read.
   */
  update (p: number, keys: readonly string[], member: boolean): void {
    if (p >= this.member.length) {
      const grown = new Uint8Array(Math.max(p + 1, this.member.length * 2))
      grown.set(this.member)
      this.member = grown
    }
    let sets = this.setsOf[p]
    if (sets == null) this.setsOf[p] = sets = keys.map(k => this.set(k))
    else if (this.member[p] === (member ? 1 : 0)) return
    this.member[p] = member ? 1 : 0
    for (const s of sets) {
      if (member) s.add(p)
      else s.delete(p)
    }
  }

  size (keys: readonly string[]): number {
    let n = 0
    for (const k of keys) n += this.sets.get(k)?.items.length ?? 0
    return n
  }

  /** Up to `n` distinct providers drawn from the union of the sets under `keys`, skipping `skip`. */
  sample (keys: readonly string[], n: number, rng: Rng, skip?: ReadonlySet<number>): number[] {
    const lists = keys.map(k => this.sets.get(k)?.items ?? [])
    const total = lists.reduce((s, l) => s + l.length, 0)
    const out = new Set<number>()
    if (total === 0) return []
    // few members: take them all; else draw with a bounded number of tries
    if (total <= n * 2) {
      for (const l of lists) for (const p of l) if (skip?.has(p) !== true) out.add(p)
      return [...out].slice(0, n)
    }
    for (let tries = 0; out.size < n && tries < n * 4; tries++) {
      let i = rng.int(total)
      for (const l of lists) {
        if (i < l.length) {
          const p = l[i] as number
          if (skip?.has(p) !== true) out.add(p)
          break
        }
        i -= l.length
      }
    }
    return [...out]
  }
}
