/**
 * The simulator's only source of chance: a small seeded generator (mulberry32), so that one
 * seed gives one run, byte for byte. Never Math.random in src/sim.
 */

export class Rng {
  private state: number

  constructor (seed: number) {
    this.state = (seed >>> 0) ^ 0x9e3779b9
  }

  /** uniform in [0, 1) */
  next (): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0)
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** integer in [0, n) */
  int (n: number): number {
    return Math.floor(this.next() * n)
  }

  /** one item of a non-empty list */
  pick<T> (items: readonly T[]): T {
    return items[this.int(items.length)] as T
  }

  /** true with probability p */
  chance (p: number): boolean {
    return this.next() < p
  }

  /** exponential with the given mean */
  exponential (mean: number): number {
    return -Math.log(1 - this.next()) * mean
  }

  /** a new generator derived from this one (independent streams for independent parts) */
  fork (): Rng {
    return new Rng(Math.floor(this.next() * 4294967296))
  }
}
