/**
 * What `idlegrid init` proposes to a provider from its GPUs: a price floor per GPU-hour from
 * the model (a conservative share of 2026 cloud on-demand prices, so a new provider wins
 * auctions), the tiers its hours suit, availability windows and a region guessed from the
 * time zone. Every value is written to the config with a comment; the operator edits it.
 */
import { groupGpus, type DetectedGpu } from '../capability/index.js'

/** Floor prices, USD per GPU-hour, by model-key prefix; first match wins (longer keys first). */
const FLOORS: Array<[prefix: string, usd: number]> = [
  ['b200', 3.20], ['h200', 2.60], ['h100', 1.90], ['gh200', 2.20], ['a100-80gb', 1.10], ['a100', 0.85],
  ['l40s', 0.75], ['l40', 0.65], ['rtx-6000-ada', 0.65], ['a6000', 0.45], ['rtx-a6000', 0.45], ['a10', 0.35],
  ['rtx-5090', 0.45], ['rtx-4090', 0.30], ['rtx-3090', 0.18], ['l4', 0.28], ['v100', 0.22], ['t4', 0.12]
]

/** Data-centre cards: usually always on, so they can offer the reserved (gold) tier. */
const DATACENTRE = /^(b200|h200|gh200|h100|a100|l40s|l40|l4|a10|v100|t4)(-|$)/

export interface ProviderProposal {
  priceFloor: number
  /** how the floor was chosen, for the comment */
  priceBasis: string
  tiers: Array<'gold' | 'silver' | 'bronze'>
  windows: string[]
  timeZone: string
  region: string
  /** how the region was chosen */
  regionBasis: string
  /** e.g. "2x NVIDIA H100 80GB HBM3 (80 GB)" */
  gpuSummary: string
  datacentre: boolean
}

/** Floor for one model: the table, else by VRAM (USD 0.012 per GB-hour, at least 0.10). */
export function priceFloorFor (modelKey: string, vramMib: number): { usd: number, basis: string } {
  const hit = FLOORS.find(([prefix]) => modelKey === prefix || modelKey.startsWith(prefix + '-'))
  if (hit != null) return { usd: hit[1], basis: `the ${hit[0]} floor in idlegrid's table` }
  const usd = Math.max(0.10, Math.round(vramMib / 1024 * 0.012 * 100) / 100)
  return { usd, basis: `${Math.round(vramMib / 1024)} GB of VRAM at 0.012 USD per GB-hour (model not in the table)` }
}

/** A region from the IANA time zone: a guess the comment asks the operator to check. */
export function regionFor (timeZone: string): string {
  const [area, city = ''] = timeZone.split('/')
  if (area === 'Europe') return /Lisbon|London|Dublin|Madrid|Paris|Brussels|Amsterdam/.test(city) ? 'eu-west' : 'eu-central'
  if (area === 'America') return /Los_Angeles|Vancouver|Denver|Phoenix|Tijuana/.test(city) ? 'us-west' : /Sao_Paulo|Buenos_Aires|Santiago|Bogota|Lima/.test(city) ? 'sa-east' : 'us-east'
  if (area === 'Asia') return /Kolkata|Calcutta|Dubai|Karachi/.test(city) ? 'ap-south' : 'ap-east'
  if (area === 'Australia' || area === 'Pacific') return 'ap-southeast'
  if (area === 'Africa') return 'af-south'
  return 'us-east'
}

export function proposeProvider (
  gpus: readonly DetectedGpu[],
  opts: { timeZone?: string, region?: string } = {}
): ProviderProposal {
  const groups = groupGpus(gpus)
  // one floor per provider: the cheapest group's, so no card is priced out
  const floors = groups.map(g => ({ group: g, ...priceFloorFor(g.modelKey, g.vramMib) })).sort((a, b) => a.usd - b.usd)
  const cheapest = floors[0]
  const datacentre = groups.every(g => DATACENTRE.test(g.modelKey))
  const timeZone = opts.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC'
  return {
    priceFloor: cheapest.usd,
    priceBasis: groups.length > 1 ? `${cheapest.basis} (the lowest of your ${groups.length} GPU models)` : cheapest.basis,
    // a workstation card is someone's desktop: offer its idle evenings and weekends, never the reserved tier
    tiers: datacentre ? ['gold', 'silver', 'bronze'] : ['silver', 'bronze'],
    windows: datacentre ? ['always'] : ['mon-fri 19:00-07:00', 'sat-sun'],
    timeZone,
    region: opts.region ?? regionFor(timeZone),
    regionBasis: opts.region != null ? 'given with --region' : `guessed from the time zone ${timeZone}: correct it`,
    gpuSummary: groups.map(g => `${g.count}x ${g.model} (${Math.round(g.vramMib / 1024)} GB)${g.simulated ? ' simulated' : ''}`).join(', '),
    datacentre
  }
}
