/**
 * What the market adds to a node (the composition root merges it in): gossip validation of
 * the market topics on every role, the bid engine on providers with a profile, the auction
 * on renters. Wiring only.
 */

import { MARKET_PROVIDER_SERVICE, marketProvider, type MarketProviderInit } from './provider/provider-service.js'
import { MARKET_RENTER_SERVICE, marketRenter, type MarketRenterInit } from './renter/renter-service.js'
import { MARKET_VALIDATION_SERVICE, marketValidation } from './shared/validation.js'
import type { Role } from '../config/index.js'
import type { NodeExtensions } from '../node/index.js'

export interface MarketServicesOptions {
  role: Role
  /** provider side (needs the profile); without it a provider does not bid */
  provider?: MarketProviderInit
  renter?: MarketRenterInit
}

export function marketServices (opts: MarketServicesOptions): Required<NodeExtensions> {
  const services: Record<string, (components: any) => unknown> = {
    [MARKET_VALIDATION_SERVICE]: marketValidation({ joinAllShards: opts.role === 'bootstrap' })
  }
  if (opts.role === 'provider' && opts.provider != null) services[MARKET_PROVIDER_SERVICE] = marketProvider(opts.provider)
  if (opts.role === 'renter') services[MARKET_RENTER_SERVICE] = marketRenter(opts.renter)
  return { services, dhtValidators: {}, dhtSelectors: {} }
}
