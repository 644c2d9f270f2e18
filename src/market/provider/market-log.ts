/**
 * A provider's market events as human lines and JSON records (bids, declines, wins, awards
 * seen and whether they taught a price), for the
 * provider command's output.
 */

import { MARKET_PROVIDER_SERVICE, type MarketProviderService } from './provider-service.js'
import type { AcceptedJob, AwardSeenEvent, BidEvent, DeclineEvent } from './provider-events.js'

/** Job ids in log lines: the first 12 hex characters. */
function shortJobId (id: string): string {
  return id.length > 12 ? id.slice(0, 12) : id
}

/**
 * Follows the provider market service among a node's `services`, when the node's role runs
 * one (bootstraps and renters do not: they yield nothing). Returns a function that stops
 * following.
 */
export function followMarketLog (
  services: Record<string, unknown>,
  onLine: (text: string, data: Record<string, unknown>) => void
): () => void {
  if (!(MARKET_PROVIDER_SERVICE in services)) return () => {}
  const provider = services[MARKET_PROVIDER_SERVICE] as MarketProviderService
  const handlers: Record<string, (evt: Event) => void> = {
    bid: (evt) => {
      const e = (evt as CustomEvent<BidEvent>).detail
      onLine(`bid ${e.priceUsd.toFixed(2)} USD/GPU-h on job ${shortJobId(e.jobId)} (${e.tier} ${e.workload}, ${e.gpuModel})`, { event: 'market:bid', jobId: e.jobId, price: e.priceUsd, tier: e.tier })
    },
    decline: (evt) => {
      const e = (evt as CustomEvent<DeclineEvent>).detail
      onLine(`no bid on job ${shortJobId(e.jobId)}: ${e.reason} (${e.detail})`, { event: 'market:decline', jobId: e.jobId, reason: e.reason })
    },
    award: (evt) => {
      const e = (evt as CustomEvent<AwardSeenEvent>).detail
      const learnt = e.priced ? 'price learnt' : `no price learnt${e.notPriced != null ? `: ${e.notPriced}` : ''}`
      onLine(`award of job ${shortJobId(e.jobId)} seen at ${e.priceUsd.toFixed(2)} USD/GPU-h (${learnt})`, { event: 'market:award', jobId: e.jobId, price: e.priceUsd, priced: e.priced, ...(e.notPriced != null ? { notPriced: e.notPriced } : {}) })
    },
    accepted: (evt) => {
      const e = (evt as CustomEvent<AcceptedJob>).detail
      onLine(`won job ${shortJobId(e.jobId)} at ${e.priceUsd.toFixed(2)} USD/GPU-h (award attempt ${e.award.message.attempt}, accepted)`, { event: 'market:won', jobId: e.jobId, price: e.priceUsd })
    }
  }
  for (const [type, handler] of Object.entries(handlers)) provider.events.addEventListener(type, handler)
  return () => {
    for (const [type, handler] of Object.entries(handlers)) provider.events.removeEventListener(type, handler)
  }
}
