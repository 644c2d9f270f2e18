import { CAPACITY_CAPABILITY, CAPACITY_SERVICE, capabilityServices, type ProviderProfile } from '../capability/index.js'
import { execServices, type DockerSettings, type RunnerKind } from '../exec/index.js'
import { ledgerServices, type LEDGER_SERVICE, type LedgerBuildOptions, type LedgerService } from '../ledger/index.js'
import { marketServices } from '../market/index.js'
import { createNode, reservesRelays, type CoreServices, type IdlegridNode, type NodeComposition, type NodeExtensions } from '../node/index.js'
import { submitServices } from '../submit/index.js'
import { serveServices } from '../serve/index.js'
import type { NodeConfig } from '../config/index.js'

/**
 * The composition root: which services each role runs on top of the core node. Each room
 * (capability, market, exec, ledger, submit) contributes its services and DHT rules; the
 * services find each other through their declared `serviceDependencies`, checked by libp2p
 * when the node starts.
 */
export function roleExtensions (
  config: NodeConfig,
  opts: BuildOptions = {}
): Required<NodeExtensions> & NodeComposition {
  const profile = opts.provider?.profile
  // capability: DHT rules for /idlegrid/... keys and discovery on every role; providers advertise
  const capability = capabilityServices({
    profile,
    recordTtlMs: opts.provider?.recordTtlMs,
    runner: opts.provider?.runner,
    nvidiaSmi: opts.provider?.nvidiaSmi
  })
  // serve: providers host service leases (their job service runs them), renters deploy services behind a gateway
  const serve = serveServices({
    role: config.role,
    host: opts.provider?.usageIntervalMs != null ? { usageIntervalMs: opts.provider.usageIntervalMs } : undefined
  })
  // exec: providers run awarded jobs on their GPU slots, whose capacity the bid engine and the ledger's summaries read
  const exec = execServices({
    role: config.role,
    dataDir: config.dataDir,
    provider:
      profile != null
        ? {
            profile,
            runner: opts.provider?.runner,
            nvidiaSmi: opts.provider?.nvidiaSmi,
            workRoot: opts.provider?.workRoot,
            jobUser: opts.provider?.jobUser,
            docker: opts.provider?.docker,
            leases: serve.host
          }
        : undefined
  })
  // market: topic validation on every role; providers bid (with their profile and the sequence of
  // the record they advertise), renters auction (one behind NAT once it holds a relay slot, so that
  // its job names an address)
  const market = marketServices({
    role: config.role,
    provider: profile != null ? { profile: () => profile, advertised: true } : undefined,
    renter: { awaitReachable: reservesRelays(config) }
  })
  return {
    services: {
      ...capability.services,
      ...market.services,
      ...exec.services,
      // ledger: every role keeps it in <dataDir>/ledger; providers append heartbeat summaries
      ...ledgerServices({ config, profile, ...opts.ledger }).services,
      // submit: renters run jobs end to end (auction rounds, attempts, receipts into the ledger)
      ...submitServices({ role: config.role, bootstrap: config.bootstrap }),
      ...serve.services
    },
    dhtValidators: { ...capability.dhtValidators, ...market.dhtValidators },
    dhtSelectors: { ...capability.dhtSelectors, ...market.dhtSelectors },
    // providers' heartbeats report the GPU slots of exec's capacity service
    heartbeatSlots: profile != null && config.role === 'provider' ? { service: CAPACITY_SERVICE, capability: CAPACITY_CAPABILITY } : undefined,
    // libp2p's own metrics, when --metrics is on (src/observe)
    metrics: opts.metrics
  }
}

/** What a role command prepared before the node is built. */
export interface BuildOptions {
  /** a provider's validated profile (policy + GPUs) and capability record lifetime */
  provider?: {
    profile: ProviderProfile
    recordTtlMs?: number
    runner?: RunnerKind
    nvidiaSmi?: string
    workRoot?: string
    jobUser?: string
    docker?: DockerSettings
    usageIntervalMs?: number
  }
  /** ledger flags (--dev-ledger-methods, --ledger-summary-seconds) */
  ledger?: LedgerBuildOptions
  /** libp2p's metrics implementation (--metrics) */
  metrics?: NodeComposition['metrics']
}

/** The services every role's node has besides the core ones. */
export interface RoleServices extends CoreServices {
  [LEDGER_SERVICE]: LedgerService
}

export async function buildNode (config: NodeConfig, opts: BuildOptions = {}): Promise<IdlegridNode<RoleServices>> {
  return await createNode<RoleServices>(config, roleExtensions(config, opts))
}
