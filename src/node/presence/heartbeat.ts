/**
 * A node's signed heartbeats: sent every interval, and on each new connection, straight to the
 * connected peers that speak the heartbeat protocol (heartbeat-stream.ts), so presence costs a
 * node O(connections / interval) whatever the network's size. The global heartbeat topic is
 * legacy and off unless asked for (`gossip`): a node then also publishes on it and reads it.
 * Both paths judge a heartbeat by the same rules (time rules ignore, increasing seq, bounded decode).
 */
import { decodeBounded, LIMITS, MAX_BYTES } from '../../../protocols/codec.js'
import { Heartbeat } from '../../../protocols/heartbeat.js'
import { DOMAIN, PROTOCOL, TOPIC } from '../../../protocols/ids.js'
import { sealEnvelope, type OpenedEnvelope } from '../../identity/index.js'
import { ACCEPT, GOSSIP_CAPABILITY, GOSSIP_SERVICE, ignore, reject, type GossipRouter, type GossipVerdict } from '../gossip.js'
import { GOSSIP_RATE_LIMITS } from '../guard/gossip-limits.js'
import { HEARTBEAT_STREAM_TIMEOUT_MS, HeartbeatInbox, sendHeartbeat } from './heartbeat-stream.js'
import type { PeerGuard } from '../guard/peer-guard.js'
import type { RateLimit } from '../guard/token-bucket.js'
import type { Role } from '../../config/index.js'
import type { GossipsubEvents } from '@chainsafe/libp2p-gossipsub'
import { serviceDependencies, type ComponentLogger, type Ed25519PrivateKey, type IdentifyResult, type Libp2pEvents, type Logger, type PeerId, type PubSub, type Startable, type TypedEventTarget } from '@libp2p/interface'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'

/** Clock difference tolerated between nodes. */
export const MAX_CLOCK_SKEW_MS = 30_000
/** A heartbeat may claim to stay fresh for at most this long. */
const MAX_HEARTBEAT_TTL_MS = 10 * 60_000
/** Bound on remembered senders. */
const MAX_TRACKED_PEERS = 10_000
/** Heartbeat sends in flight at once (a bootstrap may hold thousands of connections). */
const MAX_PARALLEL_SENDS = 32

export interface PeerPresence {
  peerId: string
  role: Role | 'unknown'
  lastSeen: number
  /**
   * the peer's clock when it sent its latest heartbeat (unix ms): lastSeen - sentAt ≈ its clock
   * skew plus delivery time
   */
  sentAt: number
  slotsTotal: number
  slotsBusy: number
  count: number
  /** the head seq of the peer's own ledger feed, as its latest heartbeat said (0: not said) */
  ledgerSeq: number
}

/** A feed head a heartbeat names: the author's peer id bytes and a seq (a hint, never evidence). */
export interface FeedHint {
  author: Uint8Array
  seq: number
}

/** What a 'heartbeat' event carries: the sender's presence and the other feeds it says grew lately. */
export interface HeardHeartbeat extends PeerPresence {
  relayedHeads: FeedHint[]
}

/** Feed heads one heartbeat names besides the sender's own (the wire limit, protocols/heartbeat.proto). */
export const MAX_RELAYED_HEADS = 4

export interface HeartbeatService {
  /** peers heard from, most recent first */
  presence(): PeerPresence[]
  /**
   * sends one heartbeat now to every connected peer that speaks the protocol (also done every
   * interval); resolves when each send ended
   */
  beat(): Promise<void>
  /** verdicts on heartbeats received on the stream protocol, by reason ("accept", "ignore:expired" …) */
  stats(): Record<string, number>
  /** our heartbeat sends: done, failed (closed, timed out), skipped (the last send to that peer still running) */
  sends(): { sent: number, failed: number, skipped: number }
  /** dispatches 'heartbeat' events (CustomEvent<HeardHeartbeat>) for each accepted heartbeat */
  readonly events: EventTarget
  /**
   * Where our heartbeats read our own ledger head seq (the ledger registers it when it starts):
   * peers that hold less of our feed pull it, the hint gossip gave before the ledger topic went off.
   * `relayed` names other feeds that grew here lately (at most MAX_RELAYED_HEADS are sent): a
   * peer not connected to their authors learns of them from us, after a partition heals for one.
   */
  reportLedgerHead(read: () => number, relayed?: () => FeedHint[]): void
}

/**
 * Where a provider's heartbeat reads its GPU slots: a service of the node, by name, and the
 * capability it provides, which the heartbeat declares as a dependency (libp2p checks it at
 * start, so a provider never reports 0 slots for want of wiring).
 */
export interface HeartbeatSlots {
  service: string
  capability: string
}

/** What the slots service answers (the capability room's CapacitySource has these). */
interface SlotCounter {
  totalSlots(): number
  freeSlots(): number
  /** slots running a job; absent: total minus free */
  busySlots?(): number
}

export interface HeartbeatInit {
  role: Role
  intervalMs: number
  /** providers report their GPU slots; others leave it unset and report 0 */
  slots?: HeartbeatSlots
  /** the node key that signs heartbeats */
  privateKey: Ed25519PrivateKey
  /** the clock the validator judges times by (default Date.now; conformance vectors fix it) */
  now?: () => number
  /** also publish on and read the legacy global heartbeat topic (--heartbeat-gossip; default off) */
  gossip?: boolean
  /** heartbeats validated per sending peer on the stream (default: the gossip heartbeats class, 2/s, bursts of 10) */
  rateLimit?: RateLimit
  /** the node's peer guard: strikes peers that send bad heartbeats or flood */
  guard?: PeerGuard
}

interface HeartbeatComponents {
  peerId: PeerId
  pubsub: PubSub<GossipsubEvents>
  [GOSSIP_SERVICE]: GossipRouter
  logger: ComponentLogger
  registrar: Registrar
  connectionManager: ConnectionManager
  events: TypedEventTarget<Libp2pEvents>
}

const ROLE_TO_WIRE: Record<Role, Heartbeat.Role> = {
  bootstrap: Heartbeat.Role.BOOTSTRAP,
  provider: Heartbeat.Role.PROVIDER,
  renter: Heartbeat.Role.RENTER
}

function roleFromWire (role: Heartbeat.Role): Role | 'unknown' {
  switch (role) {
    case Heartbeat.Role.BOOTSTRAP: return 'bootstrap'
    case Heartbeat.Role.PROVIDER: return 'provider'
    case Heartbeat.Role.RENTER: return 'renter'
    default: return 'unknown'
  }
}

class HeartbeatPublisher implements HeartbeatService, Startable {
  readonly [serviceDependencies]: string[]
  readonly events = new EventTarget()
  private readonly components: HeartbeatComponents
  private readonly init: HeartbeatInit
  private readonly log: Logger
  private readonly peers = new Map<string, PeerPresence & { seq: bigint }>()
  private readonly inbox: HeartbeatInbox
  /** connected peers whose identify listed the heartbeat protocol: who our heartbeats go to */
  private readonly listeners = new Set<string>()
  /** peers a send is still running to: a slow peer is skipped, never waited for */
  private readonly sending = new Set<string>()
  private readonly sendCounts = { sent: 0, failed: 0, skipped: 0 }
  private timer?: NodeJS.Timeout
  private phase?: NodeJS.Timeout
  private lastSeq = 0n
  private ledgerHead: () => number = () => 0
  private relayedHeads: () => FeedHint[] = () => []

  private readonly onIdentify = (evt: CustomEvent<IdentifyResult>): void => {
    const { peerId, protocols } = evt.detail
    if (!protocols.includes(PROTOCOL.heartbeat)) return
    const fresh = !this.listeners.has(peerId.toString())
    this.listeners.add(peerId.toString())
    // a new connection hears from us now, not an interval later
    if (fresh) this.sendAll([peerId], this.seal()).catch(() => {})
  }

  private readonly onDisconnect = (evt: CustomEvent<PeerId>): void => {
    this.listeners.delete(evt.detail.toString())
  }

  constructor (components: HeartbeatComponents, init: HeartbeatInit) {
    this.components = components
    this.init = init
    this.log = components.logger.forComponent('idlegrid:heartbeat')
    this[serviceDependencies] = init.slots == null ? [GOSSIP_CAPABILITY] : [GOSSIP_CAPABILITY, init.slots.capability]
    this.inbox = new HeartbeatInbox({
      rateLimit: init.rateLimit ?? GOSSIP_RATE_LIMITS.heartbeats,
      guard: init.guard,
      log: this.log,
      now: init.now
    })
  }

  /** the GPU slots reported in heartbeats: read when sent (services start together) */
  private slots (): { total: number, busy: number } {
    if (this.init.slots == null) return { total: 0, busy: 0 }
    const counter = (this.components as unknown as Record<string, SlotCounter>)[this.init.slots.service]
    const total = counter.totalSlots()
    return { total, busy: counter.busySlots?.() ?? Math.max(0, total - counter.freeSlots()) }
  }

  async start (): Promise<void> {
    const router = this.components[GOSSIP_SERVICE]
    if (this.init.gossip === true) {
      router.setValidator(TOPIC.heartbeats, (envelope) => this.check(envelope).verdict)
      router.onMessage(TOPIC.heartbeats, (envelope) => { this.record(envelope) })
    } else {
      router.setValidator(TOPIC.heartbeats, () => ignore('heartbeat topic off here'))
    }
    await this.inbox.handle(this.components.registrar, (envelope) => this.receive(envelope))
    this.components.events.addEventListener('peer:identify', this.onIdentify)
    this.components.events.addEventListener('peer:disconnect', this.onDisconnect)
  }

  afterStart (): void {
    // gossipsub accepts subscriptions only once it has started
    if (this.init.gossip === true) this.components.pubsub.subscribe(TOPIC.heartbeats)
    // a random phase: nodes started together (a host's providers, a restarted network) would
    // otherwise all beat in the same instant, and every peer judge their heartbeats in one burst
    this.phase = setTimeout(() => {
      this.timer = setInterval(() => { this.beat().catch(err => { this.log('heartbeat not sent: %e', err) }) }, this.init.intervalMs)
      this.timer.unref()
    }, Math.random() * this.init.intervalMs)
    this.phase.unref()
  }

  async stop (): Promise<void> {
    clearTimeout(this.phase)
    clearInterval(this.timer)
    this.components.events.removeEventListener('peer:identify', this.onIdentify)
    this.components.events.removeEventListener('peer:disconnect', this.onDisconnect)
    await this.components.registrar.unhandle(PROTOCOL.heartbeat)
  }

  stats (): Record<string, number> {
    return this.inbox.stats()
  }

  sends (): { sent: number, failed: number, skipped: number } {
    return { ...this.sendCounts }
  }

  reportLedgerHead (read: () => number, relayed?: () => FeedHint[]): void {
    this.ledgerHead = read
    if (relayed != null) this.relayedHeads = relayed
  }

  async beat (): Promise<void> {
    const envelope = this.seal()
    const connected = new Map<string, PeerId>()
    for (const c of this.components.connectionManager.getConnections()) {
      connected.set(c.remotePeer.toString(), c.remotePeer)
    }
    // a disconnect event can be missed (a node stopping); the listeners never outgrow the connections
    for (const id of this.listeners) if (!connected.has(id)) this.listeners.delete(id)
    const targets = [...connected].filter(([id]) => this.listeners.has(id)).map(([, peer]) => peer)
    const sends = this.sendAll(targets, envelope)
    if (this.init.gossip === true) await this.components.pubsub.publish(TOPIC.heartbeats, envelope)
    await sends
  }

  /** Sends `envelope` to each of `peers`, MAX_PARALLEL_SENDS at a time, skipping peers a send still runs to. */
  private async sendAll (peers: PeerId[], envelope: Uint8Array): Promise<void> {
    const queue = peers.filter(p => !this.sending.has(p.toString()))
    this.sendCounts.skipped += peers.length - queue.length
    for (const peer of queue) this.sending.add(peer.toString())
    const worker = async (): Promise<void> => {
      for (let peer = queue.shift(); peer != null; peer = queue.shift()) {
        try {
          await sendHeartbeat(
            this.components.connectionManager,
            peer,
            envelope,
            AbortSignal.timeout(HEARTBEAT_STREAM_TIMEOUT_MS)
          )
          this.sendCounts.sent++
        } catch (err) {
          this.sendCounts.failed++
          this.log('heartbeat to %p not sent: %e', peer, err)
        } finally {
          this.sending.delete(peer.toString())
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(MAX_PARALLEL_SENDS, queue.length) }, worker))
  }

  /** A fresh signed heartbeat with our slots and ledger head now. */
  private seal (): Uint8Array {
    const now = Date.now()
    // time-based so a restarted node continues above its earlier sequence numbers
    this.lastSeq = BigInt(now) > this.lastSeq ? BigInt(now) : this.lastSeq + 1n
    const slots = this.slots()
    const heartbeat: Heartbeat = {
      role: ROLE_TO_WIRE[this.init.role],
      seq: this.lastSeq,
      sentAt: BigInt(now),
      expiresAt: BigInt(now + Math.min(3 * this.init.intervalMs, MAX_HEARTBEAT_TTL_MS)),
      slotsTotal: slots.total,
      slotsBusy: slots.busy,
      ledgerSeq: BigInt(this.ledgerHead()),
      relayedHeads: this.relayedHeads().slice(0, MAX_RELAYED_HEADS).map(h => ({ author: h.author, seq: BigInt(h.seq) }))
    }
    let payload = Heartbeat.encode(heartbeat)
    // the bound every receiver applies: the last relayed heads give way (a hint, not news)
    while (payload.byteLength > MAX_BYTES.heartbeat && heartbeat.relayedHeads.length > 0) {
      heartbeat.relayedHeads.pop()
      payload = Heartbeat.encode(heartbeat)
    }
    return sealEnvelope(this.init.privateKey, this.components.peerId, DOMAIN.heartbeat, payload)
  }

  presence (): PeerPresence[] {
    return [...this.peers.values()]
      .map(({ seq, ...rest }) => rest)
      .sort((a, b) => b.lastSeen - a.lastSeen)
  }

  /** A heartbeat from the stream (signer checked there): judged, and recorded when accepted. */
  private receive (envelope: OpenedEnvelope): GossipVerdict {
    const { verdict, heartbeat } = this.check(envelope)
    if (verdict.action === 'accept' && heartbeat != null) this.record(envelope, heartbeat)
    return verdict
  }

  /** The heartbeat rules, the same on the stream and on the legacy topic. */
  private check (envelope: OpenedEnvelope): { verdict: GossipVerdict, heartbeat?: Heartbeat } {
    let hb: Heartbeat
    try {
      hb = decodeBounded(Heartbeat, envelope.payload, 'heartbeat', MAX_BYTES.heartbeat, LIMITS.heartbeat)
    } catch {
      return { verdict: reject('malformed heartbeat') }
    }
    return { verdict: this.judge(hb, envelope), heartbeat: hb }
  }

  private judge (hb: Heartbeat, envelope: OpenedEnvelope): GossipVerdict {
    const now = (this.init.now ?? Date.now)()
    const sentAt = Number(hb.sentAt)
    const expiresAt = Number(hb.expiresAt)
    // a clock rule: the sender's clock may be wrong, not the sender (protocols/README.md §9)
    if (sentAt > now + MAX_CLOCK_SKEW_MS) return ignore('heartbeat from the future')
    if (expiresAt <= now) return ignore('expired')
    if (expiresAt - sentAt > MAX_HEARTBEAT_TTL_MS) return reject('heartbeat lifetime too long')
    const known = this.peers.get(envelope.signer.toString())
    if (known != null && hb.seq <= known.seq) return ignore('stale sequence')
    return ACCEPT
  }

  private record (envelope: OpenedEnvelope, hb = decodeBounded(Heartbeat, envelope.payload, 'heartbeat', MAX_BYTES.heartbeat, LIMITS.heartbeat)): void {
    const id = envelope.signer.toString()
    const known = this.peers.get(id)
    if (known != null && hb.seq <= known.seq) return
    const entry = {
      peerId: id,
      role: roleFromWire(hb.role),
      lastSeen: Date.now(),
      sentAt: Number(hb.sentAt),
      slotsTotal: hb.slotsTotal,
      slotsBusy: hb.slotsBusy,
      count: (known?.count ?? 0) + 1,
      ledgerSeq: Number(hb.ledgerSeq),
      seq: hb.seq
    }
    this.peers.delete(id)
    this.peers.set(id, entry)
    if (this.peers.size > MAX_TRACKED_PEERS) this.peers.delete(this.peers.keys().next().value as string)
    const { seq, ...presence } = entry
    const detail: HeardHeartbeat = {
      ...presence,
      relayedHeads: hb.relayedHeads.map(h => ({ author: h.author, seq: Number(h.seq) }))
    }
    this.events.dispatchEvent(new CustomEvent('heartbeat', { detail }))
  }
}

/** Sends this node's signed heartbeat to its connected peers and tracks the peers heard from. */
export function heartbeatService (init: HeartbeatInit): (components: HeartbeatComponents) => HeartbeatService {
  return (components) => new HeartbeatPublisher(components, init)
}
