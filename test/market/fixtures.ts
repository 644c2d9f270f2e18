import { serviceCapabilities } from '@libp2p/interface'
import { LEDGER_CAPABILITY, ledgerServices } from '../../src/ledger/index.js'
import { neutralReputation, type ReputationSource } from '../../src/market/reputation.js'
import { marketServices } from '../../src/market/services.js'
import type { NodeConfig, Role } from '../../src/config/index.js'
import type { NodeExtensions } from '../../src/node/index.js'

/**
 * Fixed reliabilities for a test of the auction's ranking rule (which bidder wins at which
 * reliability), where a real ledger would need a history built for every figure: a service
 * under LEDGER_SERVICE that provides LEDGER_CAPABILITY and answers from `source`. Every other
 * test gives renters the real ledger (marketNodeServices).
 */
export function reputationService (source: ReputationSource = neutralReputation()): () => ReputationSource {
  return () => ({
    [serviceCapabilities]: [LEDGER_CAPABILITY],
    reliability: (peerId: string) => source.reliability(peerId),
    isExcluded: (peerId: string) => source.isExcluded?.(peerId) ?? false
  })
}

/** The market services of `role`, and the real ledger (in the node's data dir) the renter's auction reads. */
export function marketNodeServices (role: Role, _index: number, config: NodeConfig): NodeExtensions {
  const market = marketServices({ role })
  if (role === 'renter') Object.assign(market.services, ledgerServices({ config }).services)
  return market
}
