/**
 * The demo's providers: simulated GPUs across regions, prices and availability, each run
 * as a real `idlegrid provider` process with the process runner (or the docker runner).
 */

export interface DemoProvider {
  name: string
  region: string
  gpus: string
  priceFloorUsd: number
  /** extra provider flags (tiers, windows …) */
  extra: string[]
  /** why it is in the fleet */
  note: string
}

/** A window that is closed now: one hour, twelve hours from now (UTC). */
function closedWindow (now: Date): string {
  const start = (now.getUTCHours() + 12) % 24
  const pad = (n: number): string => String(n).padStart(2, '0')
  return `${pad(start)}:00-${pad((start + 1) % 24)}:00`
}

export function demoFleet (count: number, now = new Date()): DemoProvider[] {
  const fixed: DemoProvider[] = [
    { name: 'fra-h100', region: 'eu-west', gpus: 'H100:80:1', priceFloorUsd: 2.1, extra: [], note: 'the only H100 in eu-west' },
    { name: 'ams-a100', region: 'eu-central', gpus: 'A100:40:2', priceFloorUsd: 1.3, extra: [], note: 'EU A100s' },
    { name: 'iad-h100', region: 'us-east', gpus: 'H100:80:1', priceFloorUsd: 2.4, extra: [], note: 'a pricier H100 in the US' },
    { name: 'pdx-4090', region: 'us-west', gpus: 'RTX 4090:24:2', priceFloorUsd: 0.45, extra: ['--tiers', 'silver,bronze'], note: 'cheap consumer cards, no gold' },
    { name: 'nrt-l4', region: 'ap-northeast', gpus: 'L4:24:1', priceFloorUsd: 0.55, extra: ['--windows', closedWindow(now), '--time-zone', 'UTC'], note: 'available one hour a day, not now' }
  ]
  const extraRegions = ['eu-north', 'us-central', 'ap-south', 'eu-south', 'us-west']
  const fleet = fixed.slice(0, Math.min(count, fixed.length))
  for (let i = fixed.length; i < count; i++) {
    const region = extraRegions[i % extraRegions.length]
    fleet.push({ name: `${region.replace(/-/g, '')}-4090-${i + 1}`, region, gpus: 'RTX 4090:24:1', priceFloorUsd: Number((0.5 + 0.05 * (i % 7)).toFixed(2)), extra: [], note: 'extra capacity' })
  }
  return fleet
}

/** How the demo's jobs run: plain processes, or containers of `image` on the Docker engine (DOCKER_HOST). */
export type DemoRunner = { kind: 'process' } | { kind: 'docker', image: string }

/** The `idlegrid provider` flags for one demo provider. */
export function providerArgs (p: DemoProvider, runner: DemoRunner = { kind: 'process' }): string[] {
  // docker: only the demo's image, and only as the engine has it (no registry is needed)
  const run = runner.kind === 'docker' ? ['--runner', 'docker', '--images', runner.image, '--docker-pull', 'never'] : ['--runner', 'process']
  return ['--simulate-gpu', p.gpus, '--region', p.region, '--price-floor', String(p.priceFloorUsd), ...run, '--grace', '5', ...p.extra]
}
