import { decodeBounded, MAX_BYTES } from '../../protocols/codec.js'
import { Heartbeat } from '../../protocols/heartbeat.js'
import { DOMAIN, TOPIC } from '../../protocols/ids.js'
import { sealEnvelope, type OpenedEnvelope } from '../identity/index.js'
import { ACCEPT, GOSSIP_CAPABILITY, GOSSIP_SERVICE, ignore, reject, type GossipRouter, type GossipVerdict } from './gossip.js'
import type { Role } from '../config/index.js'
import type { GossipsubEvents } from '@chainsafe/libp2p-gossipsub'
import { serviceDependencies, type ComponentLogger, type Ed25519PrivateKey, type Logger, type PeerId, type PubSub, type Startable } from '@libp2p/interface'

/** Clock difference tolerated between nodes. */
export const MAX_CLOCK_SKEW_MS = 30_000
/** A heartbeat may claim to stay fresh for at most this long. */
const MAX_HEARTBEAT_TTL_MS = 10 * 60_000
/** Bound on remembered senders. */
const MAX_TRACKED_PEERS = 10_000

export interface PeerPresence {
  peerId: string
  role: Role | 'unknown'
  lastSeen: number
  /** the peer's clock when it sent its latest heartbeat (unix ms): lastSeen - sentAt ≈ its clock skew plus delivery time */
  sentAt: number
  slotsTotal: number
  slotsBusy: number
  count: number
  /** the head seq of the peer's own ledger feed, as its latest heartbeat said (0: not said) */
  ledgerSeq: number
}

export interface HeartbeatService {
  /** peers heard from, most recent first */
  presence(): PeerPresence[]
  /** publishes one heartbeat now (also done every interval) */
  beat(): Promise<void>
  /** dispatches 'heartbeat' events (CustomEvent<PeerPresence>) for each accepted heartbeat */
  readonly events: EventTarget
  /**
   * Where our heartbeats read our own ledger head seq (the ledger registers it when it starts):
   * peers that hold less of our feed pull it, the hint gossip gave before the ledger topic went off.
   */
  reportLedgerHead(read: () => number): void
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
}

interface HeartbeatComponents {
  peerId: PeerId
  pubsub: PubSub<GossipsubEvents>
  [GOSSIP_SERVICE]: GossipRouter
  logger: ComponentLogger
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
  private timer?: NodeJS.Timeout
  private lastSeq = 0n
  private ledgerHead: () => number = () => 0

  constructor (components: HeartbeatComponents, init: HeartbeatInit) {
    this.components = components
    this.init = init
    this.log = components.logger.forComponent('idlegrid:heartbeat')
    this[serviceDependencies] = init.slots == null ? [GOSSIP_CAPABILITY] : [GOSSIP_CAPABILITY, init.slots.capability]
  }

  /** the GPU slots reported in heartbeats: read when sent (services start together) */
  private slots (): { total: number, busy: number } {
    if (this.init.slots == null) return { total: 0, busy: 0 }
    const counter = (this.components as unknown as Record<string, SlotCounter>)[this.init.slots.service]
    const total = counter.totalSlots()
    return { total, busy: counter.busySlots?.() ?? Math.max(0, total - counter.freeSlots()) }
  }

  start (): void {
    this.components[GOSSIP_SERVICE].setValidator(TOPIC.heartbeats, (envelope) => this.validate(envelope))
    this.components[GOSSIP_SERVICE].onMessage(TOPIC.heartbeats, (envelope) => { this.record(envelope) })
  }

  afterStart (): void {
    this.timer = setInterval(() => { this.beat().catch(err => { this.log('heartbeat not sent: %e', err) }) }, this.init.intervalMs)
    this.timer.unref()
  }

  stop (): void {
    clearInterval(this.timer)
  }

  reportLedgerHead (read: () => number): void {
    this.ledgerHead = read
  }

  async beat (): Promise<void> {
    const now = Date.now()
    // time-based so a restarted node continues above its earlier sequence numbers
    this.lastSeq = BigInt(now) > this.lastSeq ? BigInt(now) : this.lastSeq + 1n
    const slots = this.slots()
    const payload = Heartbeat.encode({
      role: ROLE_TO_WIRE[this.init.role],
      seq: this.lastSeq,
      sentAt: BigInt(now),
      expiresAt: BigInt(now + Math.min(3 * this.init.intervalMs, MAX_HEARTBEAT_TTL_MS)),
      slotsTotal: slots.total,
      slotsBusy: slots.busy,
      ledgerSeq: BigInt(this.ledgerHead())
    })
    const envelope = sealEnvelope(this.init.privateKey, this.components.peerId, DOMAIN.heartbeat, payload)
    await this.components.pubsub.publish(TOPIC.heartbeats, envelope)
  }

  presence (): PeerPresence[] {
    return [...this.peers.values()]
      .map(({ seq, ...rest }) => rest)
      .sort((a, b) => b.lastSeen - a.lastSeen)
  }

  private validate (envelope: OpenedEnvelope): GossipVerdict {
    let hb: Heartbeat
    try {
      hb = decodeBounded(Heartbeat, envelope.payload, 'heartbeat', MAX_BYTES.heartbeat)
    } catch {
      return reject('malformed heartbeat')
    }
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

  private record (envelope: OpenedEnvelope): void {
    const hb = decodeBounded(Heartbeat, envelope.payload, 'heartbeat', MAX_BYTES.heartbeat)
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
    this.events.dispatchEvent(new CustomEvent('heartbeat', { detail: presence }))
  }
}

/** Publishes this node's signed heartbeat and tracks the peers heard from. */
export function heartbeatService (init: HeartbeatInit): (components: HeartbeatComponents) => HeartbeatService {
  return (components) => new HeartbeatPublisher(components, init)
}
