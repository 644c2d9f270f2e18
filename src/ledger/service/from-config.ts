/**
 * What the ledger adds to a node (the composition root merges it in): the ledger service,
 * in every role, with its init from the node config and the role's flags. Other services
 * reach it as `components[LEDGER_SERVICE]`, declaring LEDGER_CAPABILITY in their
 * `serviceDependencies`.
 */

import { multiaddr } from '@multiformats/multiaddr'
import { isAvailable, type ProviderProfile } from '../../capability/index.js'
import { ledgerService } from './ledger-node.js'
import { LEDGER_SERVICE } from './ledger-service.js'
import { loadTrustLists } from '../reputation/anchors/adopt.js'
import { setVerifierThreads } from '../../identity/index.js'
import type { NodeConfig } from '../../config/index.js'
import type { NodeExtensions } from '../../node/index.js'

/** Ledger options a role command may set (from its flags). */
export interface LedgerBuildOptions {
  /** offer ledger.appendTestJob and ledger.appendSummary on the control socket (--dev-ledger-methods) */
  devMethods?: boolean
  /** providers: ms between heartbeat-summary entries (--ledger-summary-seconds; default 1 h) */
  summaryIntervalMs?: number
  /** also join the legacy ledger topic (--ledger-gossip; default off) */
  gossip?: boolean
  /** which feeds sync pulls (--ledger-replicate, else config ledger.replicate; default by role: sync/scope.ts) */
  replicate?: 'all' | 'bounded'
  /**
   * what is kept of other feeds (--ledger-retain, else config ledger.retain; default 'horizon':
   * service/retention.ts)
   */
  retain?: 'horizon' | 'all'
  /** hops of the bounded scope (--ledger-horizon, else config ledger.horizon; default 2) */
  horizon?: number
  /**
   * worker threads verifying signatures, for the whole process (--ledger-verifier-threads, else
   * config ledger.verifierThreads; default a worker per core, up to 4)
   */
  verifierThreads?: number
}

export interface LedgerServicesOptions extends LedgerBuildOptions {
  config: NodeConfig
  /** a provider's profile: its availability windows bound the uptime it reports */
  profile?: ProviderProfile
}

export function ledgerServices (opts: LedgerServicesOptions): NodeExtensions {
  // the verifier's workers serve the whole process (one node runs in it outside tests)
  const verifierThreads = opts.verifierThreads ?? opts.config.ledgerVerifierThreads
  if (verifierThreads != null) setVerifierThreads(verifierThreads)
  const availability = opts.profile?.policy.availability
  return {
    services: {
      [LEDGER_SERVICE]: ledgerService({
        dataDir: opts.config.dataDir,
        role: opts.config.role,
        heartbeatMs: opts.config.heartbeatMs,
        summaryIntervalMs: opts.summaryIntervalMs,
        devMethods: opts.devMethods,
        gossip: opts.gossip,
        replicate: opts.replicate ?? opts.config.ledgerReplicate,
        retain: opts.retain ?? opts.config.ledgerRetain,
        replicationHorizon: opts.horizon ?? opts.config.ledgerHorizon,
        trustedPeers: trustSeeds(opts.config),
        trustLists:
          opts.config.trustLists.length === 0
            ? undefined
            : loadTrustLists(opts.config.trustLists, opts.config.trustOperators),
        isAvailable:
          availability == null ? undefined : at => isAvailable(availability.windows, availability.timeZone, at)
      })
    }
  }
}

/** The operator's trust seeds: the bootstrap peers' ids (the /p2p/ part) and every --trust peer. */
export function trustSeeds (config: Pick<NodeConfig, 'bootstrap' | 'trust'>): string[] {
  const ids = config.bootstrap.map(addr => multiaddr(addr).getPeerId()).filter((id): id is string => id != null)
  return [...new Set([...ids, ...config.trust])].sort()
}
