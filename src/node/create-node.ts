import { gossipsub, type GossipsubEvents } from '@chainsafe/libp2p-gossipsub'
import { createTopicScoreParams } from '@chainsafe/libp2p-gossipsub/score'
import { bootstrap } from '@libp2p/bootstrap'
import { identify, type Identify } from '@libp2p/identify'
import { kadDHT, passthroughMapper, removePrivateAddressesMapper, type KadDHT } from '@libp2p/kad-dht'
import { ping, type PingService } from '@libp2p/ping'
import { connectionEncrypters, DialPort, freeTcpPort, tlsTcp } from '../transport/index.js'
import { webSockets } from '@libp2p/websockets'
import { createLibp2p, type Libp2p, type Libp2pOptions, type ServiceFactoryMap } from 'libp2p'
import { createHash } from 'node:crypto'
import { ALL_TOPICS, PROTOCOL } from '../../protocols/ids.js'
import { loadOrCreateKey } from '../identity/index.js'
import { peerConnector, type PeerConnectorService } from './connectivity/connector.js'
import { directPath, type DirectPathService } from './connectivity/direct-path.js'
import { relayedConnectionLimit, relayListenAddresses, relayServer, relayTransport, reservesRelays } from './connectivity/relay.js'
import { routingTableRepair, type RoutingTableRepair } from './connectivity/routing-repair.js'
import { routerPortMapping } from './connectivity/upnp.js'
import { addressCheck } from './connectivity/autonat.js'
import { largeFramesInPieces } from './streams/yamux-frames.js'
import { lazyWindowYamux } from './streams/yamux-window.js'
import { guardDhtPuts } from './dht-put-guard.js'
import { GOSSIP_SERVICE, gossipRouter, type GossipRouter } from './gossip.js'
import { heartbeatService, type HeartbeatService, type HeartbeatSlots } from './presence/heartbeat.js'
import { lockDataDir, type DataDirLock } from './lock.js'
import { PeerGuard, type PeerGuardInit } from './guard/peer-guard.js'
import { peerGuardService, type PeerGuardHandle, type PeerGuardServiceInit } from './guard/peer-guard-service.js'
import type { RateLimit } from './guard/token-bucket.js'
import type { TopicClass } from './guard/gossip-limits.js'
import type { NodeConfig } from '../config/index.js'
import type { Connection, Ed25519PrivateKey, PeerId, PubSub, ServiceMap } from '@libp2p/interface'

/**
 * yamux sized for job streams (hundreds of MiB on one stream): 1 MiB messages so a job frame
 * (1 MiB chunk + framing) is one muxer message, and a 16 MiB receive window growing to 64 MiB.
 * A sender starts every stream at yamux's 256 KiB and gets more with each window update; the
 * first quick one after a stream opens doubles the window, announcing the extra 16 MiB.
 * Measured by test/bench/transfer.bench.ts. Window updates go out lazily (yamux-window.ts).
 */
const YAMUX_BULK = {
  maxMessageSize: 1024 * 1024 + 64 * 1024,
  initialStreamWindowSize: 16 * 1024 * 1024,
  maxStreamWindowSize: 64 * 1024 * 1024
} as const

export interface CoreServices extends ServiceMap {
  identify: Identify
  ping: PingService
  dht: KadDHT
  pubsub: PubSub<GossipsubEvents>
  [GOSSIP_SERVICE]: GossipRouter
  heartbeats: HeartbeatService
  connector: PeerConnectorService
  routingRepair: RoutingTableRepair
  peerGuard: PeerGuardHandle
  directPath: DirectPathService
}

/**
 * A libp2p service factory as a room exports it: it declares its own components (libp2p's
 * and the services it names in `serviceDependencies`, which libp2p checks at start).
 */
export type ServiceFactory = (components: never) => unknown

/** What a role adds to the core node: its services and DHT record rules. */
export interface NodeExtensions {
  /** more libp2p services (factory pattern), started and stopped with the node */
  services?: Record<string, ServiceFactory>
  /** kad-dht record validators and selectors by key prefix (e.g. "idlegrid" for /idlegrid/...) */
  dhtValidators?: Record<string, (key: Uint8Array, value: Uint8Array) => Promise<void>>
  dhtSelectors?: Record<string, (key: Uint8Array, records: Uint8Array[]) => number>
}

/** What the composition root adds besides the rooms' extensions: core services' wiring to them. */
export interface NodeComposition extends NodeExtensions {
  /** the service whose GPU slots this node's heartbeats report (providers) */
  heartbeatSlots?: HeartbeatSlots
  /** libp2p's metrics (e.g. @libp2p/prometheus-metrics when --metrics is on; default none) */
  metrics?: Libp2pOptions['metrics']
  /** the peer guard's policy (peer-guard.ts defaults; the bootstrap and trusted peers are added) */
  peerGuard?: PeerGuardInit & PeerGuardServiceInit
  /** gossip messages validated per author and topic class (gossip-limits.ts defaults) */
  gossipRateLimits?: Partial<Record<TopicClass, RateLimit>>
}

/** A started node; `S` names the services its composition root added (libp2p checked their dependencies at start). */
export interface IdlegridNode<S extends CoreServices = CoreServices> {
  readonly config: NodeConfig
  readonly libp2p: Libp2p<S>
  readonly peerId: PeerId
  readonly privateKey: Ed25519PrivateKey
  readonly startedAt: number
  /** stops libp2p and releases the data directory; safe to call twice */
  stop(): Promise<void>
}

/**
 * Builds and starts an idlegrid node: TCP (+ WebSockets for bootstrap nodes), noise and TLS,
 * yamux, identify, ping, kad-dht on the idlegrid protocol, gossipsub with a validator on
 * every idlegrid topic, and the node's own services. It dials nothing but the configured
 * bootstrap peers and the peers they lead to.
 */
export async function createNode<S extends CoreServices = CoreServices> (
  config: NodeConfig,
  extensions: NodeComposition = {}
): Promise<IdlegridNode<S>> {
  const privateKey = await loadOrCreateKey(config.dataDir)
  const lock = await lockDataDir(config.dataDir, config.role)
  let libp2p: Libp2p<CoreServices> | undefined
  try {
    // behind NAT, outbound connections leave from one port, so that a hole punch can use it (direct-path.ts)
    const dialPort = reservesRelays(config) ? new DialPort(await freeTcpPort()) : undefined
    const late: { connections?: (peer: PeerId) => Connection[] } = {}
    const upnp = await routerPortMapping(config)
    libp2p = await createLibp2p({
      ...libp2pOptions({ config, privateKey, extensions, dialPort, upnp, connections: () => late.connections }),
      start: false
    })
    const node = libp2p
    late.connections = (peer) => node.getConnections(peer)
    // before the DHT serves its first request: a PUT is acknowledged only when stored
    guardDhtPuts(libp2p.services.dht, {
      validators: extensions.dhtValidators ?? {},
      selectors: extensions.dhtSelectors ?? {},
      log: libp2p.logger.forComponent('idlegrid:dht')
    })
    await libp2p.start()
  } catch (err) {
    await Promise.resolve(libp2p?.stop()).catch(() => {})
    await lock.release()
    throw err
  }
  // the extensions' services are typed by the caller, who composed them
  return wrap(config, libp2p as Libp2p<S>, privateKey, lock)
}

interface Libp2pOptionsInit {
  config: NodeConfig
  privateKey: Ed25519PrivateKey
  extensions: NodeComposition
  /** the transport's dial port (behind NAT), for the direct path's punches */
  dialPort: DialPort | undefined
  /** the router port mapping service (behind NAT, `upnp` on), or none */
  upnp: Awaited<ReturnType<typeof routerPortMapping>>
  /** the node's connections to a peer, once libp2p exists (the gater's relayed-connection limit reads them) */
  connections: () => ((peer: PeerId) => Connection[]) | undefined
}

function libp2pOptions ({
  config,
  privateKey,
  extensions,
  dialPort,
  upnp,
  connections
}: Libp2pOptionsInit): Parameters<typeof createLibp2p<CoreServices>>[0] {
  const isBootstrap = config.role === 'bootstrap'
  const relay = relayServer(config)
  // one guard shared by the connection gater, the gossip router and its own service
  const bootstrapPeers = config.bootstrap.flatMap(addr => /\/p2p\/([^/]+)$/.exec(addr)?.[1] ?? [])
  const guard = new PeerGuard({
    ...extensions.peerGuard,
    trusted: [...bootstrapPeers, ...config.trust, ...(extensions.peerGuard?.trusted ?? [])]
  })
  return {
    privateKey,
    addresses: {
      // behind NAT: one /p2p-circuit per relay slot to reserve (relay.ts)
      listen: [...config.listen, ...relayListenAddresses(config)],
      announce: config.announce.length > 0 ? config.announce : undefined
    },
    // TCP whose connections keep their socket, so that libp2p's TLS runs on it natively
    // (src/transport/): job data is encrypted by Node, not through a JS stream
    transports: isBootstrap
      ? [tlsTcp({ dialPort }), webSockets(), relayTransport()]
      : [tlsTcp({ dialPort }), relayTransport()],
    // TLS listed first: the dialer's first shared choice wins, so idlegrid peers use TLS 1.3
    // (natively over TCP, as @libp2p/tls over WebSockets); peers that only speak noise still connect
    connectionEncrypters: connectionEncrypters(),
    streamMuxers: [largeFramesInPieces(lazyWindowYamux(YAMUX_BULK))],
    ...(extensions.metrics != null ? { metrics: extensions.metrics } : {}),
    // a denied peer is refused; one peer holds at most a few relayed connections to us (relay.ts)
    connectionGater: { ...guard.gater(), ...relayedConnectionLimit(connections) },
    peerDiscovery: config.bootstrap.length > 0 ? [bootstrap({ list: config.bootstrap, timeout: 100 })] : [],
    connectionManager: {
      maxConnections: config.maxConnections,
      // a renter's auction brings every bidder's connection at once, through a relay when the
      // renter is behind NAT (each upgrade there takes a few round trips): libp2p's default of
      // 10 connections being upgraded at a time refused most bidders of 20 NAT'd providers
      maxIncomingPendingConnections: Math.max(10, Math.min(config.maxConnections, 64)),
      // on a loopback or LAN network many peers can share one host address, and libp2p's
      // default (5 inbound connections per second per host) refuses most of them
      ...(config.privateAddresses ? { inboundConnectionThreshold: Math.max(5, config.maxConnections) } : {})
    },
    // one keep-alive ping per connection every 30 s (libp2p's default is 10 s: in a dense mesh
    // of thirty peers that alone kept a core busy); a node busy verifying or running jobs can
    // answer late, so allow 15 s before a connection counts as dead (libp2p's floor is 5 s)
    connectionMonitor: { pingInterval: 30_000, pingTimeout: { minTimeout: 15_000, maxTimeout: 60_000 } },
    // relays (relay.ts) and dial-backs (autonat.ts) come from the network's own peers only: no public relay or probe
    services: {
      // identify tells gossipsub and the DHT which protocols a peer speaks; a busy peer may
      // answer after libp2p's 5 s default, and a failed identify leaves the link unused
      identify: identify({ timeout: 15_000 }),
      ping: ping(),
      dht: kadDHT({
        protocol: PROTOCOL.kad,
        clientMode: config.role === 'renter',
        peerInfoMapper: config.privateAddresses ? passthroughMapper : removePrivateAddressesMapper,
        validators: extensions.dhtValidators ?? {},
        selectors: extensions.dhtSelectors ?? {}
      }),
      pubsub: gossipsub({
        // gossipsub only: with the fallback on (its default) a node also speaks and advertises
        // /floodsub/1.0.0, which the wire spec does not list and no idlegrid node needs
        fallbackToFloodsub: false,
        allowPublishToZeroTopicPeers: true,
        emitSelf: false,
        // the envelope inside is every message's signature (protocols/README.md §2): a gossip
        // signature of its own cost each node a second verify per message and ~110 bytes a copy
        globalSignaturePolicy: 'StrictNoSign',
        msgIdFn: gossipMessageId,
        // every message arrives from several mesh peers: a fast id drops the copies after one
        // hash, before gossipsub builds, awaits and base64-encodes an id for each (a run
        // without it: 4.2 ms CPU per job request per provider at 40 providers, 3.6 with it)
        fastMsgIdFn: fastMessageId,
        doPX: isBootstrap,
        // a bootstrap is the hub of peers behind NAT, which reach each other only through it: with
        // gossipsub's mesh of 6 (at most 12) it passed a job request at once to 12 of 20 NAT'd
        // providers and the rest by lazy gossip a heartbeat or more later, past short bid windows
        ...(isBootstrap ? { D: 12, Dlo: 8, Dhi: 32 } : {}),
        scoreParams: {
          // on a loopback or LAN network every peer shares one IP: colocation must not graylist them all
          ...(config.privateAddresses ? { IPColocationFactorWeight: 0 } : {}),
          // positive terms stay small and capped; one rejected message outweighs them all, and two
          // (P4 is quadratic) take the sender past the graylist threshold (-80) for a while
          topics: Object.fromEntries(ALL_TOPICS.map(topic => [topic, createTopicScoreParams({
            topicWeight: 1,
            timeInMeshWeight: 0.01,
            timeInMeshQuantum: 1_000,
            timeInMeshCap: 300,
            firstMessageDeliveriesWeight: 0.1,
            firstMessageDeliveriesDecay: 0.99,
            firstMessageDeliveriesCap: 20,
            // market and heartbeat topics are quiet and bursty: gossipsub's default under-delivery
            // penalty (P3: fewer than 20 messages per mesh peer) would graylist every honest peer
            meshMessageDeliveriesWeight: 0,
            meshFailurePenaltyWeight: 0,
            invalidMessageDeliveriesWeight: -20,
            invalidMessageDeliveriesDecay: 0.99
          })]))
        }
      }),
      [GOSSIP_SERVICE]: gossipRouter({ guard, rateLimits: extensions.gossipRateLimits }),
      // heartbeats go to connected peers on a stream; the legacy topic only with --heartbeat-gossip.
      // The per-peer stream rate is the gossip heartbeats class's (a spec that raises one raises both)
      heartbeats: heartbeatService({
        role: config.role,
        intervalMs: config.heartbeatMs,
        privateKey,
        slots: extensions.heartbeatSlots,
        gossip: config.heartbeatGossip,
        guard,
        rateLimit: extensions.gossipRateLimits?.heartbeats
      }),
      connector: peerConnector({ targetPeers: config.targetPeers, bootstrap: config.bootstrap }),
      // re-adds connected DHT servers that missed kad-dht's one routing-table ping
      routingRepair: routingTableRepair({ protocol: PROTOCOL.kad }),
      peerGuard: peerGuardService(guard, extensions.peerGuard),
      // a direct connection to a peer a relay joined: connection reversal or a hole punch
      directPath: directPath({ dialPort, allowPrivate: config.privateAddresses }),
      // a public listen address is announced once a peer dialed it back (autonat.ts)
      autonat: addressCheck(),
      // circuit relay v2 for peers behind NAT, within the operator's limits (relay.ts)
      ...(relay != null ? { relay } : {}),
      // behind NAT: the router forwards the listen port where it offers UPnP (upnp.ts)
      ...(upnp != null ? { upnp } : {}),
      // each factory's components are checked by libp2p at start (serviceDependencies), not here
      ...extensions.services as ServiceFactoryMap
    }
  }
}

/**
 * A gossip message's id on the wire (IHAVE, IWANT), protocols/README.md §2: SHA-256 of the
 * topic's length (u32, big-endian), the topic (UTF-8) and the data.
 */
export function gossipMessageId (msg: { topic: string, data: Uint8Array }): Uint8Array {
  const topic = Buffer.from(msg.topic, 'utf8')
  const length = Buffer.alloc(4)
  length.writeUInt32BE(topic.byteLength)
  return createHash('sha256').update(length).update(topic).update(msg.data).digest()
}

/** The copy check's key: the message id (only topic and data make a message under StrictNoSign). */
function fastMessageId (msg: { topic: string, data?: Uint8Array }): string {
  return Buffer.from(gossipMessageId({ topic: msg.topic, data: msg.data ?? new Uint8Array(0) })).toString('base64')
}

function wrap<S extends CoreServices> (
  config: NodeConfig,
  libp2p: Libp2p<S>,
  privateKey: Ed25519PrivateKey,
  lock: DataDirLock
): IdlegridNode<S> {
  let stopping: Promise<void> | undefined
  return {
    config,
    libp2p,
    peerId: libp2p.peerId,
    privateKey,
    startedAt: Date.now(),
    stop: async () => {
      stopping ??= (async () => {
        try {
          await libp2p.stop()
        } finally {
          await lock.release()
        }
      })()
      await stopping
    }
  }
}
