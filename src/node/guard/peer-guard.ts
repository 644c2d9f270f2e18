/**
 * The per-peer guard: which peers this node refuses for a while, and why. A peer is denied,
 * and its connections closed (peer-guard-service.ts), when its gossipsub score falls far below
 * the graylist threshold, when it goes over a rate limit again and again (valid gossip
 * messages of its own, gossip.ts; inbound streams, peer-guard-service.ts), and while denied it
 * is refused by the connection gater both ways: its dials in, our dials out.
 *
 * Bootstrap and trusted peers are denied only briefly: a bootstrap may be a node's only way
 * into the network, and a trusted peer is the operator's choice; a long denial of either on
 * one bad spell (or on a bad scoring rule of ours) would cut the node off. The short denial
 * still sheds their load, and one that keeps misbehaving is denied again each time.
 */
import { DenyList, type Denial } from './deny-list.js'
import { TokenBuckets, type RateLimit } from './token-bucket.js'
import type { ConnectionGater, PeerId } from '@libp2p/interface'

export interface PeerGuardInit {
  /** peer ids denied only for `trustedDenyMs`: the bootstrap peers and the operator's trusted peers */
  trusted?: Iterable<string>
  /** how long a peer is denied (default 10 min) */
  denyMs?: number
  /** how long a bootstrap or trusted peer is denied (default 30 s) */
  trustedDenyMs?: number
  /** peers denied at once, at most (default 4096) */
  maxDenied?: number
  /**
   * a connected peer whose gossipsub score is below this is denied (default -1000: far below
   * gossipsub's graylist, -80; a peer that sends one bad message now and then, say a clock
   * past the skew bound, is only graylisted, and keeps its connection for sync and streams)
   */
  denyScore?: number
  /** inbound streams a peer may open (default 50 a second, bursts of 500) */
  streams?: RateLimit
  /**
   * gossip RPCs a graylisted peer may send (default 20 a second, bursts of 200): gossipsub
   * drops them unread, so its score stops falling and would never reach `denyScore`, while
   * each RPC still costs a decode; past this rate each one is a strike
   */
  graylistedRpcs?: RateLimit
  /**
   * how many over-limit events (streams refused, own gossip messages dropped, graylisted RPCs) are
   * forgiven (default 5 a second, 50 at once)
   */
  strikes?: RateLimit
  /** peers whose stream and strike buckets are kept (least recently seen dropped past it; default 10 000) */
  maxTrackedPeers?: number
  now?: () => number
}

export const PEER_GUARD_DEFAULTS = {
  denyMs: 10 * 60_000,
  trustedDenyMs: 30_000,
  maxDenied: 4096,
  denyScore: -1000,
  streams: { perSecond: 50, burst: 500 },
  graylistedRpcs: { perSecond: 20, burst: 200 },
  strikes: { perSecond: 5, burst: 50 },
  maxTrackedPeers: 10_000
} as const

export interface PeerGuardCounters {
  /** denials made (a peer denied twice counts twice) */
  denied: number
  /** denials that closed open connections */
  disconnected: number
  /** gossip messages ignored for their author's rate limit */
  droppedByRate: number
  /** inbound streams refused (over the rate, or from a denied peer) */
  streamsRefused: number
  /** connections refused by the gater (dials out and in) */
  connectionsRefused: number
  /** gossip RPCs gossipsub dropped unread because their sender was graylisted */
  graylistedRpcs: number
}

export interface PeerGuardSnapshot {
  counters: PeerGuardCounters
  denied: Denial[]
}

/** What the guard does to a peer it denies: closes its connections (the service installs it). */
export type DenyHook = (peerId: string, denial: Denial) => void

export class PeerGuard {
  readonly counters: PeerGuardCounters = {
    denied: 0,
    disconnected: 0,
    droppedByRate: 0,
    streamsRefused: 0,
    connectionsRefused: 0,
    graylistedRpcs: 0
  }

  readonly denyScore: number
  private readonly trusted: Set<string>
  private readonly denyMs: number
  private readonly trustedDenyMs: number
  private readonly streamLimit: RateLimit
  private readonly graylistedRpcLimit: RateLimit
  private readonly strikeLimit: RateLimit
  private readonly list: DenyList
  private readonly buckets: TokenBuckets
  private readonly hooks = new Set<DenyHook>()

  constructor (init: PeerGuardInit = {}) {
    const now = init.now ?? Date.now
    this.trusted = new Set(init.trusted ?? [])
    this.denyMs = init.denyMs ?? PEER_GUARD_DEFAULTS.denyMs
    this.trustedDenyMs = init.trustedDenyMs ?? PEER_GUARD_DEFAULTS.trustedDenyMs
    this.denyScore = init.denyScore ?? PEER_GUARD_DEFAULTS.denyScore
    this.streamLimit = init.streams ?? PEER_GUARD_DEFAULTS.streams
    this.graylistedRpcLimit = init.graylistedRpcs ?? PEER_GUARD_DEFAULTS.graylistedRpcs
    this.strikeLimit = init.strikes ?? PEER_GUARD_DEFAULTS.strikes
    this.list = new DenyList(init.maxDenied ?? PEER_GUARD_DEFAULTS.maxDenied, now)
    this.buckets = new TokenBuckets(init.maxTrackedPeers ?? PEER_GUARD_DEFAULTS.maxTrackedPeers, now)
  }

  isTrusted (peer: PeerId | string): boolean {
    return this.trusted.has(peer.toString())
  }

  isDenied (peer: PeerId | string): boolean {
    return this.list.has(peer.toString())
  }

  /** Denies `peer` (briefly when trusted) and tells the hooks, which close its connections. */
  deny (peer: PeerId | string, reason: string): Denial {
    const id = peer.toString()
    const trusted = this.trusted.has(id)
    const denial = this.list.deny(id, trusted ? `${reason} (trusted or bootstrap: short denial)` : reason, trusted ? this.trustedDenyMs : this.denyMs)
    this.counters.denied++
    for (const hook of this.hooks) hook(id, denial)
    return denial
  }

  /** Called with every denial; returns the unsubscribe. */
  onDeny (hook: DenyHook): () => void {
    this.hooks.add(hook)
    return () => this.hooks.delete(hook)
  }

  /**
   * A gossip message of `author`'s over its rate limit was dropped. Counted against the author
   * only when it sent the message itself (`direct`): a relayed copy may be a third party
   * replaying the author's old messages, and that must not get the author denied.
   */
  messageOverLimit (author: PeerId, direct: boolean, topicClass: string): void {
    this.counters.droppedByRate++
    if (direct) this.strike(author, `over its ${topicClass} gossip rate limit again and again`)
  }

  /**
   * `peer` broke a protocol rule on a stream of its own (a heartbeat with a bad signature, an
   * oversized frame …): a strike. One now and then is forgiven (a bug, a version skew); a
   * stream of them gets the peer denied like a flood does.
   */
  misbehaved (peer: PeerId, reason: string): void {
    this.strike(peer, `${reason}, again and again`)
  }

  /**
   * gossipsub dropped an RPC of `peer`'s unread: its score is below the graylist. A peer that
   * keeps sending while graylisted is denied, however its score decays: its first messages may
   * have scored it just below the graylist, and gossipsub judges nothing from it after that.
   */
  rpcWhileGraylisted (peer: PeerId | string): void {
    this.counters.graylistedRpcs++
    const id = peer.toString()
    if (this.buckets.take(`graylisted:${id}`, this.graylistedRpcLimit)) return
    this.strike(id, `sending gossip faster than ${this.graylistedRpcLimit.perSecond} RPCs/s while graylisted, again and again`)
  }

  /** Whether an inbound stream from `peer` may be handled (false: refuse it). */
  admitStream (peer: PeerId): boolean {
    const id = peer.toString()
    if (this.list.has(id)) {
      this.counters.streamsRefused++
      return false
    }
    if (this.buckets.take(`stream:${id}`, this.streamLimit)) return true
    this.counters.streamsRefused++
    this.strike(peer, `opening streams faster than ${this.streamLimit.perSecond}/s (bursts of ${this.streamLimit.burst}) again and again`)
    return false
  }

  /** A peer whose gossipsub score is `score`: denied when below the bound. */
  checkScore (peer: PeerId | string, score: number): void {
    if (score < this.denyScore && !this.isDenied(peer)) this.deny(peer, `gossipsub score ${score.toFixed(0)} below ${this.denyScore}`)
  }

  /** The connection gater: a denied peer is refused whichever side dials. */
  gater (): Partial<ConnectionGater> {
    const refuse = async (peer: PeerId): Promise<boolean> => {
      if (!this.list.has(peer.toString())) return false
      this.counters.connectionsRefused++
      return true
    }
    return {
      denyDialPeer: refuse,
      denyInboundEncryptedConnection: refuse,
      denyOutboundEncryptedConnection: refuse,
      denyInboundUpgradedConnection: refuse,
      denyOutboundUpgradedConnection: refuse
    }
  }

  snapshot (): PeerGuardSnapshot {
    return { counters: { ...this.counters }, denied: this.list.list() }
  }

  private strike (peer: PeerId | string, reason: string): void {
    const id = peer.toString()
    if (this.list.has(id) || this.buckets.take(`strike:${id}`, this.strikeLimit)) return
    this.deny(id, reason)
  }
}
