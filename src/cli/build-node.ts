import { capabilityServices, type ProviderProfile } from '../capability/index.js'
import { execExtensions, type RunnerKind } from '../exec/index.js'
import { connectLedger, ledgerExtensions, type LedgerBuildOptions } from '../ledger/index.js'
import { marketServices } from '../market/index.js'
import { createNode, type IdlegridNode, type NodeExtensions } from '../node/index.js'
import type { NodeConfig } from '../config/index.js'

/**
 * The composition root: which services each role runs on top of the core node. Each idea
 * (capability, market, exec, ledger) contributes its services and DHT rules here.
 */
export function roleExtensions (_config: NodeConfig, opts: BuildOptions = {}): NodeExtensions {
  const extensions: Required<NodeExtensions> = { services: {}, dhtValidators: {}, dhtSelectors: {} }
  // capability: DHT rules for /idlegrid/... keys and discovery on every role; providers advertise
  const capability = capabilityServices({ profile: opts.provider?.profile, recordTtlMs: opts.provider?.recordTtlMs, runner: opts.provider?.runner, nvidiaSmi: opts.provider?.nvidiaSmi })
  Object.assign(extensions.services, capability.services)
  Object.assign(extensions.dhtValidators, capability.dhtValidators)
  Object.assign(extensions.dhtSelectors, capability.dhtSelectors)
  // market: topic validation on every role; providers bid (with their profile), renters auction
  const profile = opts.provider?.profile
  // exec: providers run awarded jobs on their GPU slots (the bid engine reads the slots); renters get exec.submit
  const exec = execExtensions({ role: _config.role, dataDir: _config.dataDir, provider: profile != null ? { profile, runner: opts.provider?.runner, nvidiaSmi: opts.provider?.nvidiaSmi } : undefined })
  const market = marketServices({ role: _config.role, provider: profile != null ? { profile: () => profile, capacity: exec.capacity } : undefined })
  Object.assign(extensions.services, market.services)
  Object.assign(extensions.services, exec.services)
  // ledger: every role keeps it in <dataDir>/ledger; providers append heartbeat summaries
  Object.assign(extensions.services, ledgerExtensions({ config: _config, profile, capacity: exec.capacity, ...opts.ledger }))
  return extensions
}

/** What a role command prepared before the node is built. */
export interface BuildOptions {
  /** a provider's validated profile (policy + GPUs) and capability record lifetime */
  provider?: { profile: ProviderProfile, recordTtlMs?: number, runner?: RunnerKind, nvidiaSmi?: string }
  /** ledger flags (--dev-ledger-methods, --ledger-summary-seconds) */
  ledger?: LedgerBuildOptions
}

export async function buildNode (config: NodeConfig, opts: BuildOptions = {}): Promise<IdlegridNode> {
  const node = await createNode(config, roleExtensions(config, opts))
  // exec's attestations (and receipts) go into the ledger; the auction reads its reputation
  connectLedger(node.libp2p.services)
  return node
}
