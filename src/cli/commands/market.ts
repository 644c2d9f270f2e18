import { parseDiscoveryFilters, type DiscoveredProvider, type DiscoveryResult } from '../../capability/index.js'
import { asNumber } from '../../config/index.js'
import { EXIT, UsageError } from '../errors.js'
import { oneShot } from '../one-shot.js'
import { COMMON_OPTIONS, NODE_OPTIONS } from '../options.js'
import { formatDuration, type Output } from '../output.js'
import { shortPeerId } from '../../common/index.js'
import type { CommandDefinition } from '../command.js'

const FILTER_FLAG: Record<string, string> = {
  'no-simulated': '--no-simulated',
  gpu: '--gpu',
  'min-vram': '--min-vram',
  region: '--region',
  residency: '--residency',
  tier: '--tier',
  workload: '--workload',
  dataset: '--dataset',
  'available-now': '--available-now'
}

export const marketCommand: CommandDefinition = {
  name: 'market',
  usage: 'idlegrid market ls [--gpu MODEL]... [--min-vram GB] [--region R] [--residency ZONE] [--tier T] [--workload K] [--available-now] [--no-simulated] [--json] [--verbose]',
  allowPositionals: true,
  options: {
    ...NODE_OPTIONS,
    gpu: { type: 'string', multiple: true, valueName: 'MODEL', description: 'GPU model, e.g. H100, a100-40gb, "RTX 4090" (repeatable: any of them)' },
    'min-vram': { type: 'string', valueName: 'GB', description: 'at least this much memory on a matching GPU (marketing size: an 80 GB card qualifies for 80)' },
    region: { type: 'string', valueName: 'REGION', description: 'region, e.g. eu-west' },
    residency: { type: 'string', valueName: 'ZONE', description: 'data-residency zone, e.g. eu' },
    tier: { type: 'string', valueName: 'TIER', description: 'accepts this tier: gold, silver or bronze' },
    workload: { type: 'string', valueName: 'KIND', description: 'accepts this workload: inference, training, batch-inference, evaluation, sweep' },
    dataset: { type: 'string', multiple: true, valueName: 'SHA256', description: 'has this dataset cached (repeatable: all of them)' },
    'available-now': { type: 'boolean', description: 'inside one of its availability windows now' },
    'no-simulated': { type: 'boolean', description: 'leave out providers advertising simulated GPUs' },
    timeout: { type: 'string', valueName: 'S', description: 'bound on the whole lookup in seconds (default 20)' },
    wait: { type: 'string', valueName: 'S', description: 'a short-lived peer waits up to S seconds to reach its bootstrap peers (default 3)' },
    ...COMMON_OPTIONS
  },
  details: 'Runs on the node of the data directory when one is running, else on a short-lived renter peer that\n' +
    'needs --bootstrap (or IDLEGRID_BOOTSTRAP). Records are fetched from the DHT and verified (signature by\n' +
    'the provider, not expired); --verbose lists the dropped ones. --json prints one JSON array.',
  run: async (values, positionals, out) => {
    const sub = positionals[0]
    if (sub !== 'ls' || positionals.length > 1) {
      throw new UsageError(`idlegrid market: expected the subcommand "ls"${sub != null && sub !== 'ls' ? `, got '${sub}'` : ''} (see idlegrid market --help)`)
    }
    const filters = parseDiscoveryFilters({
      gpus: values.gpu,
      minVramGb: values['min-vram'],
      region: values.region,
      residency: values.residency,
      tier: values.tier,
      workload: values.workload,
      datasets: values.dataset,
      availableNow: values['available-now'],
      excludeSimulated: values['no-simulated']
    })
    const timeoutMs = 1000 * asNumber(values.timeout ?? 20, 'timeout', { min: 1, max: 120 })
    const wait = asNumber(values.wait ?? 3, 'wait', { min: 0, max: 120 })
    const { result } = await oneShot('capability.discover', { filters, timeoutMs }, values, { settleMs: wait * 1000, timeoutMs: timeoutMs + 5_000 })
    const found = result as DiscoveryResult
    report(found, values.verbose === true, out)
    return EXIT.ok
  }
}

function report (found: DiscoveryResult, verbose: boolean, out: Output): void {
  if (out.json) {
    out.data(found.providers)
  } else if (found.providers.length > 0) {
    printTable(found.providers, out)
  }
  const lines: string[] = []
  if (found.providers.length === 0) lines.push(emptyReason(found))
  if (found.truncated) lines.push(`note: more providers exist than were fetched (${found.candidates} candidates); narrow the filters`)
  if (verbose) {
    lines.push(`looked up ${found.indexKeys.join(', ')}: ${found.candidates} candidates, ${found.dropped.length} dropped, ${found.dhtMessages} DHT requests, ${found.elapsedMs} ms`)
    for (const d of found.dropped) lines.push(`  dropped ${d.peerId}: ${d.reason} (${d.detail})`)
  }
  // with --json, stdout is the array alone; explanations go to stderr
  for (const line of lines) {
    if (out.json) out.warn(line)
    else out.info(line)
  }
}

function emptyReason (found: DiscoveryResult): string {
  if (found.candidates === 0) return `no providers found: none advertises under ${found.indexKeys.join(', ')} (is this peer connected to the network? --bootstrap)`
  const parts = Object.entries(found.removedBy).map(([filter, n]) => `${FILTER_FLAG[filter] ?? filter} removed ${n}`)
  if (found.dropped.length > 0) parts.push(`${found.dropped.length} dropped as missing, expired or invalid (--verbose for details)`)
  return `no providers found: ${found.candidates} candidate${found.candidates === 1 ? '' : 's'} under ${found.indexKeys.join(', ')}; ${parts.join(', ')}`
}

function printTable (providers: DiscoveredProvider[], out: Output): void {
  const rows = providers.map(p => [
    shortPeerId(p.peerId),
    p.gpus.map(g => `${g.count}x ${g.model}`).join(', '),
    p.gpus.map(g => `${g.vramGb}G`).join(','),
    `${p.region} (${p.residency})`,
    `$${p.priceFloor.toFixed(2)}`,
    p.windows.join('; ') + (p.timeZone !== 'UTC' ? ` ${p.timeZone}` : '') + (p.availableNow ? '' : ' [closed]'),
    p.simulated ? 'yes' : 'no',
    formatDuration(p.ageMs)
  ])
  const header = ['PEER', 'GPUS', 'VRAM', 'REGION', 'FLOOR/GPU-H', 'WINDOWS', 'SIMULATED', 'AGE']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map(r => (r[i] as string).length)))
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] as number)).join('  ').trimEnd()
  out.info(line(header))
  for (const r of rows) out.info(line(r))
  out.info(`${providers.length} provider${providers.length === 1 ? '' : 's'}`)
}
