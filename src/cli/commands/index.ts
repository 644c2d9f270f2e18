import type { CommandEntry } from '../command.js'

/**
 * Every `idlegrid` command, in the order the help lists them. A command's module (and what it
 * needs: a node's whole stack, the simulator, …) loads only when that command runs, so help and
 * the commands a running node answers start in a fraction of the time.
 */
export const COMMANDS: CommandEntry[] = [
  {
    name: 'demo',
    summary: 'Run the whole market on this machine (processes on loopback, temporary data): auctions, jobs, preemption, attestations.',
    load: async () => (await import('./demo.js')).demoCommand
  },
  {
    name: 'bootstrap',
    summary: 'Run a seed node: an always-on DHT server and gossip meeting point with no special authority.',
    load: async () => (await import('./roles.js')).bootstrapCommand
  },
  {
    name: 'provider',
    summary: 'Run a provider node on a GPU box: advertise, bid on jobs, run them and sign attestations.',
    load: async () => (await import('./roles.js')).providerCommand
  },
  {
    name: 'renter',
    summary: 'Run a light renter peer (DHT client mode) that stays up and reports what it sees.',
    load: async () => (await import('./roles.js')).renterCommand
  },
  {
    name: 'market',
    summary: 'Browse the market: `market ls` lists providers by GPU, VRAM, region, tier and availability.',
    load: async () => (await import('./market.js')).marketCommand
  },
  {
    name: 'submit',
    summary: 'Submit a job: auction it, ship it to the winner, stream its log, verify the attested outputs, sign the receipt.',
    load: async () => (await import('./submit.js')).submitCommand
  },
  {
    name: 'deploy',
    summary: 'Deploy a service (examples/services/*.yaml) on leases: one auction per replica, a gateway on the renter node, kept at size.',
    load: async () => (await import('./services.js')).deployCommand
  },
  {
    name: 'services',
    summary: 'List, inspect, scale or stop the services deployed on the renter node.',
    load: async () => (await import('./services.js')).servicesCommand
  },
  {
    name: 'id',
    summary: 'Print the node\'s peer id and listen addresses (of the node running on the data directory, or of a short-lived one).',
    load: async () => (await import('./id.js')).idCommand
  },
  {
    name: 'status',
    summary: 'Show peers, topics and uptime of the node running on the data directory (or of a short-lived peer).',
    load: async () => (await import('./status.js')).statusCommand
  },
  {
    name: 'ledger',
    summary: 'Inspect the replicated ledger: status (authors, entries, heads, disk use, earnings), show PEER, earnings, flush, sync.',
    load: async () => (await import('./ledger.js')).ledgerCommand
  },
  {
    name: 'reputation',
    summary: 'Show providers\' reputation computed from the local ledger: score in [0,1] and the evidence behind it.',
    load: async () => (await import('./reputation.js')).reputationCommand
  },
  {
    name: 'trust-list',
    summary: 'Sign a trust list as a network operator (sign), or verify and print one (show).',
    load: async () => (await import('./trust-list.js')).trustListCommand
  },
  {
    name: 'sim',
    summary: 'Simulate the market on a GPU-cluster trace (the node\'s own market code, virtual time) against the old way.',
    load: async () => (await import('./sim.js')).simCommand
  },
  {
    name: 'init',
    summary: 'Write a commented config for a role; for a provider, detect the GPUs and propose a policy (price floor, tiers, windows).',
    load: async () => (await import('./init.js')).initCommand
  },
  {
    name: 'doctor',
    summary: 'Check what a provider or renter needs here: Node, GPUs, Docker, data dir, disk, ports, bootstrap peers, clock.',
    load: async () => (await import('./doctor.js')).doctorCommand
  }
]
