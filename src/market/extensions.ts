/**
 * What the market adds to a node (the composition root merges it in): gossip validation of
 * the market topics on every role, the bid engine on providers with a profile, the auction
 * on renters.
 */

import { marketProvider, type AcceptedJob, type BidEvent, type DeclineEvent, type MarketProviderInit, type MarketProviderService } from './provider-service.js'
import { marketRenter, type MarketRenterInit } from './renter-service.js'
import { marketValidation } from './validation.js'
import type { Role } from '../config/index.js'
import type { NodeExtensions } from '../node/index.js'

/** Service names, so other services can ask for them in their components. */
export const MARKET_VALIDATION_SERVICE = 'marketValidation'
export const MARKET_PROVIDER_SERVICE = 'marketProvider'
export const MARKET_RENTER_SERVICE = 'marketRenter'
/** What the market services provide, for other services' `serviceDependencies`. */
export const MARKET_PROVIDER_CAPABILITY = '@idlegrid/market-provider'
export const MARKET_RENTER_CAPABILITY = '@idlegrid/market-renter'

export interface MarketExtensionOptions {
  role: Role
  /** provider side (needs the profile); without it a provider does not bid */
  provider?: MarketProviderInit
  renter?: MarketRenterInit
}

export function marketExtensions (opts: MarketExtensionOptions): Required<NodeExtensions> {
  const services: Record<string, (components: any) => unknown> = {
    [MARKET_VALIDATION_SERVICE]: marketValidation()
  }
  if (opts.role === 'provider' && opts.provider != null) services[MARKET_PROVIDER_SERVICE] = marketProvider(opts.provider)
  if (opts.role === 'renter') services[MARKET_RENTER_SERVICE] = marketRenter(opts.renter)
  return { services, dhtValidators: {}, dhtSelectors: {} }
}

/**
 * Follows a provider's market events as human lines and JSON records (bids, declines, wins),
 * for the provider command's output. Returns a function that stops following; a node without
 * the provider market service yields nothing.
 */
export function followMarketLog (services: Record<string, unknown>, onLine: (text: string, data: Record<string, unknown>) => void): () => void {
  const provider = services[MARKET_PROVIDER_SERVICE] as MarketProviderService | undefined
  if (provider == null) return () => {}
  const short = (id: string): string => id.length > 12 ? id.slice(0, 12) : id
  const handlers: Record<string, (evt: Event) => void> = {
    bid: (evt) => {
      const e = (evt as CustomEvent<BidEvent>).detail
      onLine(`bid ${e.priceUsd.toFixed(2)} USD/GPU-h on job ${short(e.jobId)} (${e.tier} ${e.workload}, ${e.gpuModel})`, { event: 'market:bid', jobId: e.jobId, price: e.priceUsd, tier: e.tier })
    },
    decline: (evt) => {
      const e = (evt as CustomEvent<DeclineEvent>).detail
      onLine(`no bid on job ${short(e.jobId)}: ${e.reason} (${e.detail})`, { event: 'market:decline', jobId: e.jobId, reason: e.reason })
    },
    accepted: (evt) => {
      const e = (evt as CustomEvent<AcceptedJob>).detail
      onLine(`won job ${short(e.jobId)} at ${e.priceUsd.toFixed(2)} USD/GPU-h (award attempt ${e.award.message.attempt}, accepted)`, { event: 'market:won', jobId: e.jobId, price: e.priceUsd })
    }
  }
  for (const [type, handler] of Object.entries(handlers)) provider.events.addEventListener(type, handler)
  return () => { for (const [type, handler] of Object.entries(handlers)) provider.events.removeEventListener(type, handler) }
}
