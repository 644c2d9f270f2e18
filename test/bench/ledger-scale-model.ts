/**
 * The ledger's per-node cost at network scale (issue 40 item 3; docs/ledger-scale.md is the
 * reference): what a provider, a renter and a seed store, verify and receive per day and per
 * year, from a model of the market and the per-entry costs ledger-scale.bench.ts measures.
 *
 * The market: `providers` providers and `renters` renters; `jobsPerS` jobs a second, each two
 * entries (the provider's attestation, the renter's receipt) plus each provider's heartbeat
 * summaries (`summariesPerDay`). Each renter awards its jobs among a pool of `poolSize`
 * providers (the providers that bid to it: its `mayAward` roots), drawn at random, so each
 * provider serves renters × poolSize / providers renters. A node's replication scope
 * (src/ledger/sync/scope.ts) is computed on that graph by breadth-first search from its roots
 * within `horizon` hops: a renter's roots are itself and its pool, a provider's itself (its
 * counterparties are its renters), a seed holds everything. The trust seeds' own feeds are
 * the seeds', which write nothing, so they add nothing. Entries per feed per day follow from
 * the rates: a provider's feed holds its jobs' attestations and its summaries, a renter's its
 * receipts.
 */

export interface LedgerScaleModel {
  providers: number
  renters: number
  jobsPerS: number
  /** heartbeat summaries a provider appends per day (one an hour by default) */
  summariesPerDay: number
  /** providers a renter awards among (and that bid to it) */
  poolSize: number
  /** hops of the bounded scope */
  horizon: number
  /** how many seeds share serving pulls of new entries */
  seeds: number
  /** the pseudo-random seed of the market graph */
  seed: number
  /**
   * days of other feeds a node keeps (retention: protocols/README.md §7, the horizon and a
   * day's margin); a seed keeps everything (`retain: all`)
   */
  retentionDays: number
}

export const DEFAULT_SCALE_MODEL: LedgerScaleModel = {
  providers: 10_000,
  renters: 2_000,
  jobsPerS: 100,
  summariesPerDay: 24,
  poolSize: 50,
  horizon: 2,
  seeds: 4,
  seed: 1,
  retentionDays: 225
}

/** Per-entry costs, measured (ledger-scale.bench.ts). */
export interface EntryCosts {
  /** mean encoded entry envelope, as sent in a range (one job entry; summaries are smaller) */
  wireBytesPerEntry: number
  /** LevelDB bytes per stored entry (entry, indexes, grants), after writes settle */
  diskBytesPerEntry: number
  /** CPU to verify and store one entry arriving alone (announcement, gossip): one signature */
  ingestOneCpuUs: number
  /** CPU per entry of a synced range (one signature per range of up to 256) */
  ingestRangeCpuUs: number
}

export interface RoleCost {
  role: string
  /** feeds in scope */
  feeds: number
  entriesPerDay: number
  diskBytesPerDay: number
  diskBytesPerYear: number
  /** what the node holds once retention drops entries (a seed keeping all: a year's worth, and growing) */
  diskBytesHeld: number
  /** entries a new node of this role pulls to catch up (what it keeps), and their CPU at the range rate */
  freshSyncEntries: number
  freshSyncCpuSeconds: number
  cpuSecondsPerDay: number
  bytesInPerDay: number
  bytesOutPerDay: number
}

/** A small deterministic generator (mulberry32), so the same model gives the same graph. */
function random (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The market graph: renter r's pool of providers, and each provider's renters. */
function marketGraph (m: LedgerScaleModel): { pools: number[][], rentersOf: number[][] } {
  const next = random(m.seed)
  const pools: number[][] = []
  const rentersOf: number[][] = Array.from({ length: m.providers }, () => [])
  for (let r = 0; r < m.renters; r++) {
    const pool = new Set<number>()
    while (pool.size < Math.min(m.poolSize, m.providers)) pool.add(Math.floor(next() * m.providers))
    pools.push([...pool])
    for (const p of pool) rentersOf[p].push(r)
  }
  return { pools, rentersOf }
}

/** Feeds within `horizon` hops of the roots: providers and renters in scope. */
function scopeOf (
  g: { pools: number[][], rentersOf: number[][] },
  roots: { providers: number[], renters: number[] },
  horizon: number
): { providers: number, renters: number } {
  const providers = new Map<number, number>(roots.providers.map(p => [p, 0]))
  const renters = new Map<number, number>(roots.renters.map(r => [r, 0]))
  const queue: Array<['p' | 'r', number, number]> = [...roots.providers.map(p => ['p', p, 0] as ['p', number, number]), ...roots.renters.map(r => ['r', r, 0] as ['r', number, number])]
  for (let i = 0; i < queue.length; i++) {
    const [side, id, hop] = queue[i]
    if (hop >= horizon) continue
    const next = side === 'p' ? g.rentersOf[id] : g.pools[id]
    const seen = side === 'p' ? renters : providers
    for (const n of next) {
      if (seen.has(n)) continue
      seen.set(n, hop + 1)
      queue.push([side === 'p' ? 'r' : 'p', n, hop + 1])
    }
  }
  return { providers: providers.size, renters: renters.size }
}

/** Disk, CPU and bytes per day and year for a provider, a renter and a seed. */
export function projectLedger (
  m: LedgerScaleModel,
  c: EntryCosts
): { rates: Record<string, number>, roles: RoleCost[] } {
  const day = 86_400
  const jobsPerDay = m.jobsPerS * day
  const providerEntries = jobsPerDay / m.providers + m.summariesPerDay
  const renterEntries = jobsPerDay / m.renters
  const total = jobsPerDay * 2 + m.providers * m.summariesPerDay
  const g = marketGraph(m)
  const renterScope = scopeOf(g, { providers: g.pools[0], renters: [0] }, m.horizon)
  const providerRoot = g.rentersOf.findIndex(rs => rs.length > 0)
  const providerScope = scopeOf(g, { providers: [providerRoot], renters: [] }, m.horizon)
  // a node's scope: its own feed's entries arrive alone (written here); counterparties' entries
  // about it arrive announced (alone); the rest by range pulls
  const role = (
    name: string,
    scope: { providers: number, renters: number },
    ownEntries: number,
    announced: number,
    servesShare: number,
    keepsAll = false
  ): RoleCost => {
    const entriesPerDay = scope.providers * providerEntries + scope.renters * renterEntries
    const ranged = Math.max(0, entriesPerDay - ownEntries - announced)
    const diskBytesPerDay = entriesPerDay * c.diskBytesPerEntry
    const keptDays = keepsAll ? 365 : m.retentionDays
    return {
      role: name,
      feeds: scope.providers + scope.renters,
      entriesPerDay: Math.round(entriesPerDay),
      diskBytesPerDay: Math.round(diskBytesPerDay),
      diskBytesPerYear: Math.round(diskBytesPerDay * 365),
      diskBytesHeld: Math.round(diskBytesPerDay * keptDays),
      freshSyncEntries: Math.round(entriesPerDay * keptDays),
      freshSyncCpuSeconds: Math.round(entriesPerDay * keptDays * c.ingestRangeCpuUs / 1e6),
      cpuSecondsPerDay: Number(((announced * c.ingestOneCpuUs + ranged * c.ingestRangeCpuUs) / 1e6).toFixed(1)),
      bytesInPerDay: Math.round((announced + ranged) * c.wireBytesPerEntry),
      bytesOutPerDay: Math.round((ownEntries + servesShare) * c.wireBytesPerEntry)
    }
  }
  // every node's scope entries are pulled once from a seed: the seeds share those pulls
  const rentersHeld = renterScope.providers * providerEntries + renterScope.renters * renterEntries
  const providersHeld = providerScope.providers * providerEntries + providerScope.renters * renterEntries
  const seedServes = (m.renters * rentersHeld + m.providers * providersHeld) / m.seeds
  const roles = [
    role('provider', providerScope, providerEntries, jobsPerDay / m.providers, 0),
    role('renter', renterScope, renterEntries, renterEntries, 0),
    // a seed is a trust seed: every entry is announced to it, one at a time
    role('seed', { providers: m.providers, renters: m.renters }, 0, total, seedServes, true)
  ]
  return {
    rates: {
      entriesPerDay: total,
      providerFeedEntriesPerDay: Math.round(providerEntries),
      renterFeedEntriesPerDay: Math.round(renterEntries)
    },
    roles
  }
}

const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB']
export function formatBytes (n: number): string {
  let i = 0
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++ }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`
}

/** The projection as a text table. */
export function projectionTable (roles: RoleCost[]): string {
  const rows = [['role', 'feeds', 'entries/day', 'disk/day', 'disk/year', 'held', 'fresh sync', 'CPU/day', 'in/day', 'out/day']]
  for (const r of roles) rows.push([r.role, String(r.feeds), r.entriesPerDay.toLocaleString('en'), formatBytes(r.diskBytesPerDay), formatBytes(r.diskBytesPerYear), formatBytes(r.diskBytesHeld), `${(r.freshSyncEntries / 1e6).toFixed(1)} M, ${r.freshSyncCpuSeconds.toLocaleString('en')} s`, `${r.cpuSecondsPerDay.toLocaleString('en')} s`, formatBytes(r.bytesInPerDay), formatBytes(r.bytesOutPerDay)])
  const widths = rows[0].map((_, i) => Math.max(...rows.map(r => r[i].length)))
  return rows.map(r => '| ' + r.map((cell, i) => cell.padEnd(widths[i])).join(' | ') + ' |').join('\n')
}
