/**
 * The commented YAML config `idlegrid init` writes. Strings are written as JSON strings
 * (valid YAML), so no value read from nvidia-smi or a flag can break out of its line.
 */
import type { Role } from '../config/index.js'
import type { ProviderProposal } from './proposal.js'

export interface ConfigTextOptions {
  role: Role
  dataDir: string
  bootstrap: string[]
  /** provider: what was proposed, and the simulated GPU specs when no driver is used */
  proposal?: ProviderProposal
  simulateGpu?: string[]
  nvidiaSmi?: string
}

const q = (s: string): string => JSON.stringify(s)
const list = (items: string[]): string => `[${items.map(q).join(', ')}]`

const LISTEN: Record<Role, string[]> = {
  bootstrap: ['/ip4/0.0.0.0/tcp/4001', '/ip4/0.0.0.0/tcp/4002/ws'],
  provider: ['/ip4/0.0.0.0/tcp/4011'],
  renter: ['/ip4/0.0.0.0/tcp/0']
}

export function configText (opts: ConfigTextOptions): string {
  const { role } = opts
  const lines = [
    `# idlegrid ${role} config, written by \`idlegrid init --role ${role}\` on ${new Date().toISOString().slice(0, 10)}.`,
    `# Run:   idlegrid ${role} --config <this file>        Check: idlegrid doctor --config <this file>`,
    '# Flags given on the command line override these fields. Reference: docs/install.md.',
    `role: ${role}`,
    '# key, ledger and control socket; owner-only (mode 700)',
    `dataDir: ${q(opts.dataDir)}`,
    role === 'renter'
      ? '# a renter dials out; port 0 lets the system pick'
      : `# other machines must reach this port (open it in the firewall${role === 'provider' ? '; renters stream jobs to it' : ''})`,
    `listen: ${list(LISTEN[role])}`,
    '# behind NAT, announce the public address instead, e.g.:',
    `# announce: ["/dns4/gpu1.example.org/tcp/${role === 'bootstrap' ? '4001' : '4011'}"]`,
    '# seed nodes to join through (multiaddrs ending in /p2p/<peer id>); the seed prints its own at start',
    opts.bootstrap.length > 0 ? `bootstrap: ${list(opts.bootstrap)}` : 'bootstrap: []   # add: ["/dns4/seed1.example.org/tcp/4001/p2p/12D3KooW..."]'
  ]
  if (role === 'bootstrap') lines.push('# a public seed keeps loopback/LAN addresses out of the DHT', 'privateAddresses: false', 'maxConnections: 2000', 'heartbeatSeconds: 30')
  if (role === 'provider' && opts.proposal != null) lines.push(...providerLines(opts.proposal, opts))
  return lines.join('\n') + '\n'
}

function providerLines (p: ProviderProposal, opts: ConfigTextOptions): string[] {
  return [
    '',
    `# Your policy: what you run, when and for how much. Detected: ${p.gpuSummary}.`,
    'provider:',
    `  # ${p.regionBasis}; residency zone = the prefix (renters may require it)`,
    `  region: ${q(p.region)}`,
    `  # USD per GPU-hour you accept at least: ${p.priceBasis}.`,
    '  # Auctions clear at the bids, so a floor a little under the market wins work; raise it when you are busy.',
    `  priceFloor: ${p.priceFloor.toFixed(2)}`,
    p.datacentre
      ? '  # gold = reserved (never preempted), silver = on demand, bronze = interruptible; an always-on card can offer all three'
      : '  # silver = on demand, bronze = interruptible; gold (reserved, never preempted) is left out: this card has an owner who comes back',
    `  tiers: ${list(p.tiers)}`,
    '  workloads: ["inference", "training", "batch-inference", "evaluation", "sweep"]',
    '  # docker images jobs may use (entries may end in *); nothing else runs. Add the ones you trust.',
    '  images: ["nvcr.io/nvidia/pytorch:*", "nvcr.io/nvidia/tritonserver:*"]',
    '  availability:',
    `    timeZone: ${q(p.timeZone)}`,
    p.datacentre ? '    # e.g. ["mon-fri 19:00-07:00", "sat-sun"] to offer nights and weekends only' : '    # nights and weekends, when the desk is empty; "always" for all the time',
    `    windows: ${list(p.windows)}`,
    '  maxJobMinutes: 1440',
    '  thermal: { maxTemperatureC: 85 }',
    '  # power: { maxPowerWatts: 350 }   # stop bidding above this board power',
    '  # diskBudgetGiB: 64               # disk all running jobs may hold (default 16 per GPU)',
    ...(opts.simulateGpu != null && opts.simulateGpu.length > 0
      ? ['  # simulated GPUs (development): remove this line on a machine with an NVIDIA driver', `  simulateGpu: ${list(opts.simulateGpu)}`]
      : []),
    ...(opts.nvidiaSmi != null ? [`  nvidiaSmi: ${q(opts.nvidiaSmi)}`] : [])
  ]
}
