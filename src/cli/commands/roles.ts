import { COMMON_OPTIONS, NODE_OPTIONS } from '../options.js'
import { runRole } from '../run-role.js'
import type { Command } from '../command.js'

const ROLE_DETAILS = 'Runs until SIGINT/SIGTERM, then stops cleanly (exit 0). One-shot commands (idlegrid status, id, …)\ntalk to it through the control socket in its data directory.'

export const bootstrapCommand: Command = {
  name: 'bootstrap',
  summary: 'Run a seed node: an always-on DHT server and gossip meeting point with no special authority.',
  usage: 'idlegrid bootstrap [options]',
  options: { ...NODE_OPTIONS, ...COMMON_OPTIONS },
  details: `${ROLE_DETAILS}\nDefault listen addresses: /ip4/127.0.0.1/tcp/4001 and /ip4/127.0.0.1/tcp/4002/ws; use\n--listen /ip4/0.0.0.0/tcp/4001 to serve other machines. It prints the multiaddrs peers should use.`,
  run: async (values, _, out) => await runRole('bootstrap', values, out)
}

export const providerCommand: Command = {
  name: 'provider',
  summary: 'Run a provider node on a GPU box: advertise, bid on jobs, run them and sign attestations.',
  usage: 'idlegrid provider [options]',
  options: { ...NODE_OPTIONS, ...COMMON_OPTIONS },
  details: ROLE_DETAILS,
  run: async (values, _, out) => await runRole('provider', values, out)
}

export const renterCommand: Command = {
  name: 'renter',
  summary: 'Run a light renter peer (DHT client mode) that stays up and reports what it sees.',
  usage: 'idlegrid renter [options]',
  options: { ...NODE_OPTIONS, ...COMMON_OPTIONS },
  details: ROLE_DETAILS,
  run: async (values, _, out) => await runRole('renter', values, out)
}
