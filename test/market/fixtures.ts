import { serviceCapabilities } from '@libp2p/interface'
import { multiaddr } from '@multiformats/multiaddr'
import { equals } from 'uint8arrays/equals'
import { defaultLogger } from '@libp2p/logger'
import { isJobShardTopic, jobShardOf, JOB_SHARD_TOPICS, PROTOCOL } from '../../protocols/ids.js'
import { AcceptRequest } from '../../protocols/market.js'
import { MAX_BYTES } from '../../protocols/codec.js'
import { CAPACITY_SERVICE, type ProviderProfile } from '../../src/capability/index.js'
import { slotCapacity } from '../../src/exec/provider/capacity.js'
import { slotSchedulerFor } from '../../src/exec/role-services.js'
import { LEDGER_CAPABILITY, ledgerServices } from '../../src/ledger/index.js'
import { neutralReputation, type ReputationSource } from '../../src/market/shared/reputation.js'
import { marketServices } from '../../src/market/role-services.js'
import { answerBid, MAX_BID_REQUEST_BYTES } from '../../src/market/shared/bid-stream.js'
import { BidAck, readAcceptResponse, signBid, usdToMicro, type AcceptResponse, type Bid, type JobRequest } from '../../src/market/shared/messages.js'
import { GOSSIP_SERVICE, lookupFirst, requestOnce, serveOnce, type GossipRouter, type RequestDialer } from '../../src/node/index.js'
import { componentsOf, connectionManagerOf, waitFor, type InProcessNetwork } from '../utils/index.js'
import type { MarketProviderInit } from '../../src/market/provider/provider-service.js'
import type { NodeConfig, Role } from '../../src/config/index.js'
import type { IdlegridNode, NodeExtensions } from '../../src/node/index.js'
import type { OpenedEnvelope, Signed } from '../../src/identity/index.js'
import type { ConnectionManager } from '@libp2p/interface-internal'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

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

/** A bidding provider's market services, with exec's capacity service over a real slot scheduler for `profile`. */
export function providerMarketServices (profile: ProviderProfile, init: Omit<MarketProviderInit, 'profile'> = {}): NodeExtensions {
  const market = marketServices({ role: 'provider', provider: { ...init, profile: () => profile } })
  market.services[CAPACITY_SERVICE] = slotCapacity(slotSchedulerFor(profile))
  return market
}

/**
 * Waits until every node is connected to the bootstrap and every market topic has a mesh:
 * libp2p refuses more than a few inbound connections per second from one host, so some of the
 * nodes started together miss the bootstrap's first dial and are dialled again; gossip relays
 * through the bootstrap, so it must see everyone and everyone must see someone.
 */
export async function waitForMarketMesh (net: InProcessNetwork): Promise<void> {
  const addr = net.bootstrap.libp2p.getMultiaddrs()[0]
  await waitFor(async () => {
    const missing = net.all.filter(
      n => n !== net.bootstrap && n.libp2p.getConnections(net.bootstrap.peerId).length === 0
    )
    for (const n of missing) await n.libp2p.dial(addr as Parameters<typeof n.libp2p.dial>[0]).catch(() => {})
    return missing.length === 0
  }, { timeoutMs: 30_000, intervalMs: 300, what: 'every node to connect to the bootstrap' })
  // providers join the shards they serve, the bootstrap joins every shard; renters publish by fanout
  const bootstrapSees = (topic: string): Set<string> =>
    new Set(net.bootstrap.libp2p.services.pubsub.getSubscribers(topic).map(p => p.toString()))
  await waitFor(() => net.providers.every(n => {
    const shards = n.libp2p.services.pubsub.getTopics().filter(isJobShardTopic)
    return shards.every(t => meshPeers(n, t) > 0 && bootstrapSees(t).has(n.peerId.toString()))
  }), { timeoutMs: 30_000, what: 'every provider in the mesh of each of its job shards' })
  await waitFor(
    () => net.renters.every(n => n.libp2p.services.pubsub.getSubscribers(JOB_SHARD_TOPICS[0] as string).length > 0),
    { timeoutMs: 30_000, what: 'every renter to know a job shard relay' }
  )
  // bids come over a direct stream: connect renters and providers first, so that a first
  // auction on a loaded machine measures the auction rather than a cold TLS handshake
  for (const r of net.renters) {
    await waitFor(async () => {
      const cold = net.providers.filter(p => r.libp2p.getConnections(p.peerId).length === 0)
      for (const p of cold) {
        await r.libp2p.dial(p.libp2p.getMultiaddrs()[0] as Parameters<typeof r.libp2p.dial>[0]).catch(() => {})
      }
      return cold.length === 0
    }, { timeoutMs: 30_000, intervalMs: 300, what: 'every renter connected to every provider' })
  }
  // and open one bid stream each way round (an empty bid, answered INVALID): on a loaded 2-core
  // machine the first stream of a connection took 1.5 s, longer than a test's bid window
  await Promise.all(
    net.providers.flatMap(p =>
      net.renters.map(async r => {
        await sendRawBid(p, r.peerId, new Uint8Array(0), undefined, 30_000).catch(() => {})
      })
    )
  )
}

function meshPeers (node: IdlegridNode, topic: string): number {
  return meshPeerIds(node, topic).length
}

function meshPeerIds (node: IdlegridNode, topic: string): string[] {
  return (node.libp2p.services.pubsub as unknown as { getMeshPeers: (t: string) => string[] })
    .getMeshPeers(topic)
    .map(String)
}

/**
 * A bid signed by `by` for `job` at `usd` per GPU-hour: a simulated H100 80 GB in eu-west (EU
 * residency), valid for a minute.
 */
export function signedTestBid (
  by: { key: Ed25519PrivateKey, peerId: PeerId },
  job: JobRequest,
  usd: number,
  over: Partial<Bid> = {}
): Signed<Bid> {
  const now = Date.now()
  return signBid(by.key, by.peerId, {
    jobId: job.jobId,
    provider: by.peerId.toMultihash().bytes,
    priceMicroUsd: usdToMicro(usd),
    gpuModel: 'h100-80gb',
    vramMib: 81920,
    region: 'eu-west',
    residency: 'eu',
    createdAt: BigInt(now),
    expiresAt: BigInt(now + 60_000),
    capabilitySeq: 0n,
    jobNonce: job.nonce,
    simulated: true,
    cachedDatasets: 0,
    addrs: [],
    ...over
  })
}

/**
 * An attacker's ear on every job shard (renters do not join shards): joins them all and calls
 * `handler` with each job request heard; returns the unsubscribe.
 */
export async function hearAllJobs (
  node: IdlegridNode,
  handler: (envelope: OpenedEnvelope) => void,
  relay?: IdlegridNode
): Promise<() => void> {
  const router = node.libp2p.services[GOSSIP_SERVICE] as GossipRouter
  const offs = JOB_SHARD_TOPICS.map(topic => router.onMessage(topic, handler))
  for (const topic of JOB_SHARD_TOPICS) node.libp2p.services.pubsub.subscribe(topic)
  // in the mesh of every shard (the bootstrap joins them all) before anything is published
  await waitFor(() => JOB_SHARD_TOPICS.every(t => meshPeers(node, t) > 0), { timeoutMs: 30_000, what: 'the listener in every shard\'s mesh' })
  // and in the relay's mesh too: our side grafts at once, but the relay forwards only to its
  // own mesh, and a message it relays before our GRAFT lands is never gossiped to a peer that
  // is in its mesh by the next heartbeat (a renter not connected to us reaches us only this way)
  if (relay != null) {
    const me = node.peerId.toString()
    await waitFor(() => JOB_SHARD_TOPICS.every(t => meshPeerIds(relay, t).includes(me)), { timeoutMs: 30_000, what: 'the listener in the relay\'s mesh of every shard' })
  }
  return () => {
    for (const off of offs) off()
    for (const topic of JOB_SHARD_TOPICS) node.libp2p.services.pubsub.unsubscribe(topic)
  }
}

/**
 * Sends raw bid bytes from `from` to `to` on the bid stream, as a (mis)behaving provider would; the
 * renter's answer.
 */
export async function sendRawBid (
  from: IdlegridNode,
  to: PeerId,
  envelope: Uint8Array,
  job?: JobRequest,
  timeoutMs = 10_000
): Promise<BidAck> {
  // where the job request says the renter listens, as a provider dials it
  const multiaddrs = (job?.renterAddrs ?? []).map(a => multiaddr(a))
  if (multiaddrs.length > 0) await from.libp2p.peerStore.merge(to, { multiaddrs })
  const cm = connectionManagerOf(from)
  return BidAck.decode(
    await requestOnce(cm, to, {
      protocol: PROTOCOL.bid,
      request: envelope,
      maxResponseBytes: MAX_BYTES.bidAck,
      signal: AbortSignal.timeout(timeoutMs)
    })
  )
}

/**
 * Publishes `job` (signed by `renter`) on its shard and resolves with the provider's bid on it,
 * heard on the renter's bid stream, which this takes over for the while (the renter runs no
 * auction for it) and leaves unhandled.
 */
export async function publishAndTakeBid (renter: IdlegridNode, job: Signed<JobRequest>): Promise<Signed<Bid>> {
  let bid: Signed<Bid> | undefined
  const { registrar } = componentsOf(renter)
  await renter.libp2p.unhandle(PROTOCOL.bid)
  await serveOnce(registrar, PROTOCOL.bid, async (request, remote) => answerBid(request, remote, (heard) => {
    if (equals(heard.message.jobId, job.message.jobId)) bid = heard
    return 'kept'
  }), { maxRequestBytes: MAX_BID_REQUEST_BYTES, timeoutMs: 5_000, log: defaultLogger().forComponent('test:renter') })
  try {
    await renter.libp2p.services.pubsub.publish(jobShardOf(job.message.constraints), job.envelope)
    await waitFor(() => bid != null, { what: 'the provider\'s bid on the job' })
  } finally {
    await renter.libp2p.unhandle(PROTOCOL.bid)
  }
  return bid as Signed<Bid>
}

/** `from` asks `winner` to accept the award envelope over the accept protocol, as a renter does; the signed answer. */
export async function askAccept (
  from: IdlegridNode,
  winner: PeerId,
  award: Uint8Array,
  timeoutMs = 5_000
): Promise<AcceptResponse> {
  const dialer = {
    openConnection: async (peer: Parameters<typeof from.libp2p.dial>[0], opts?: { signal?: AbortSignal }) =>
      await from.libp2p.dial(peer, opts)
  } as unknown as ConnectionManager
  const bytes = await requestOnce(dialer, winner, {
    protocol: PROTOCOL.accept,
    request: AcceptRequest.encode({ award }),
    maxResponseBytes: MAX_BYTES.acceptResponse + 256,
    signal: AbortSignal.timeout(timeoutMs)
  })
  return readAcceptResponse(bytes, winner)
}

/** `node`'s request dialer, as a holder of an award that knows its renter by id only dials it (lookupFirst). */
export function dialerOf (node: IdlegridNode): RequestDialer {
  return lookupFirst(componentsOf(node))
}
