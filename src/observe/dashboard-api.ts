/**
 * The JSON behind the dashboard's pages: the node's own control methods (the same answers
 * `idlegrid status`, `ledger`, `reputation` print) and what the observer kept (auctions, jobs,
 * figures over time). One function per page.
 */
import type { NodeObserver } from './recorder.js'

/** DHT discovery for the market page runs at most this often; its answer is reused meanwhile. */
const DISCOVERY_REUSE_MS = 30_000
const DISCOVERY_TIMEOUT_MS = 5_000
/** Reputation is a full trust computation over the ledger: an open page reuses an answer this long. */
const REPUTATION_REUSE_MS = 10_000
/** The services page shows at most this many deployments (a renter's own: there are few) and recent events each. */
const MAX_DEPLOYMENTS = 32
const EVENTS_SHOWN = 5

interface Discovered {
  peerId: string
  region: string
  residency: string
  priceFloor: number
  simulated: boolean
  availableNow: boolean
  gpus: Array<{ model: string, vramGb: number, count: number }>
}

export class DashboardApi {
  private discovery?: { at: number, providers: Discovered[] }
  private discovering?: Promise<Discovered[]>
  /** the last reputation answers: the list, and one provider's evidence */
  private readonly reputationAnswers = new Map<string, { at: number, answer: Promise<unknown> }>()

  constructor (private readonly observer: NodeObserver, private readonly identity: { role: string, peerId: string }) {}

  async page (name: string, params: URLSearchParams): Promise<unknown> {
    switch (name) {
      case 'overview': return { ...this.identity, uptimeMs: (await this.observer.call('status'))?.uptimeMs ?? 0 }
      case 'network': return await this.network()
      case 'market': return await this.market()
      case 'jobs': return { renter: this.observer.jobs(), provider: (await this.observer.call('exec.jobs')) ?? null }
      case 'services': return await this.services()
      case 'earnings': return { samples: this.observer.providerSamples(), market: (await this.observer.call('market.stats')) ?? null, ledger: (await this.observer.call('ledger.earnings')) ?? null }
      case 'reputation': {
        const peer = params.get('peer')
        return peer == null ? { providers: (await this.reputation('')) ?? [] } : { explain: (await this.reputation(peer) as any[] | undefined)?.[0] ?? null }
      }
      default: return undefined
    }
  }

  /** The `reputation` control method's answer for `peer` ('' for the list), reused for REPUTATION_REUSE_MS. */
  private async reputation (peer: string): Promise<unknown> {
    const held = this.reputationAnswers.get(peer)
    if (held != null && Date.now() - held.at < REPUTATION_REUSE_MS) return await held.answer
    // two entries at most: the list and the provider last looked at
    for (const key of this.reputationAnswers.keys()) if (key !== '') this.reputationAnswers.delete(key)
    const answer = this.observer.call('reputation', peer === '' ? {} : { peer })
    this.reputationAnswers.set(peer, { at: Date.now(), answer })
    return await answer
  }

  /**
   * A renter's deployments (the `services status` answer of each: replicas with their provider,
   * region, state and latency, the gateway's routing figures, the last events) and a provider's
   * hosted leases (`services.hosted`); null where the role has none.
   */
  private async services (): Promise<unknown> {
    const ls = await this.observer.call('services.ls')
    const names = ((ls?.services ?? []) as Array<{ name: string }>).slice(0, MAX_DEPLOYMENTS).map(s => s.name)
    const statuses = await Promise.all(names.map(async name => await this.observer.call('services.status', { name })))
    const deployments = statuses
      .filter(s => s != null)
      .map(s => ({ ...s, events: (s.events ?? []).slice(-EVENTS_SHOWN) }))
    const hosted = await this.observer.call('services.hosted')
    return { deployments: ls == null ? null : deployments, hosted: hosted?.leases ?? null }
  }

  private async network (): Promise<unknown> {
    const status = await this.observer.call('status')
    const providers = await this.providers()
    const regionOf = new Map(providers.map(p => [p.peerId, p.region]))
    const heard = (status?.heard ?? []) as Array<{ peerId: string, role: string }>
    const regions: Record<string, number> = {}
    for (const p of heard) if (p.role === 'provider') { const r = regionOf.get(p.peerId) ?? 'unknown'; regions[r] = (regions[r] ?? 0) + 1 }
    return {
      peers: status?.peers ?? [],
      topics: status?.topics ?? {},
      heard: heard.map(p => ({ ...p, region: regionOf.get(p.peerId) ?? null })),
      regions,
      routingTable: (status?.routingTable ?? []).length,
      dhtMode: status?.dhtMode ?? null,
      gossip: status?.gossip ?? {}
    }
  }

  private async market (): Promise<unknown> {
    const providers = await this.providers()
    const byGpu: Record<string, number> = {}
    const byRegion: Record<string, number> = {}
    for (const p of providers) {
      byRegion[p.region] = (byRegion[p.region] ?? 0) + 1
      for (const g of p.gpus) byGpu[g.model] = (byGpu[g.model] ?? 0) + g.count
    }
    return {
      providers,
      byGpu,
      byRegion,
      auctions: this.observer.recentAuctions().reverse(),
      prices: this.observer.clearingPrices(),
      stats: (await this.observer.call('market.stats')) ?? null
    }
  }

  /** Providers advertised in the DHT, looked up at most every DISCOVERY_REUSE_MS, one lookup at a time. */
  private async providers (): Promise<Discovered[]> {
    if (this.discovery != null && Date.now() - this.discovery.at < DISCOVERY_REUSE_MS) return this.discovery.providers
    this.discovering ??= (async () => {
      const result = await this.observer.call('capability.discover', { filters: {}, timeoutMs: DISCOVERY_TIMEOUT_MS })
      const providers = (result?.providers ?? []) as Discovered[]
      // an empty answer (a node just started, records not yet in the DHT) is asked again next time
      if (providers.length > 0) this.discovery = { at: Date.now(), providers }
      return providers
    })().finally(() => { this.discovering = undefined })
    return await this.discovering
  }
}
