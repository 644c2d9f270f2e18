import { serviceCapabilities } from '@libp2p/interface'
import { LEDGER_CAPABILITY, LEDGER_SERVICE } from '../../src/ledger/index.js'
import { neutralReputation, type ReputationSource } from '../../src/market/reputation.js'
import { marketServices } from '../../src/market/services.js'
import type { Role } from '../../src/config/index.js'
import type { NodeExtensions } from '../../src/node/index.js'

/**
 * A stand-in for the ledger where a test only needs the auction's reliability input: a
 * service (put it under LEDGER_SERVICE) that provides LEDGER_CAPABILITY, which the renter's
 * market service declares as its dependency, and answers from `source`.
 */
export function reputationService (source: ReputationSource = neutralReputation()): () => ReputationSource {
  return () => ({
    [serviceCapabilities]: [LEDGER_CAPABILITY],
    reliability: (peerId: string) => source.reliability(peerId),
    isExcluded: (peerId: string) => source.isExcluded?.(peerId) ?? false
  })
}

/** The market services of `role`, renters with a neutral reputation stand-in for the ledger. */
export function marketNodeServices (role: Role): NodeExtensions {
  const market = marketServices({ role })
  if (role === 'renter') market.services[LEDGER_SERVICE] = reputationService()
  return market
}
