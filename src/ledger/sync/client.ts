/**
 * The sync protocol's client side: heads exchanges with connected peers (on connect, every
 * round, and on demand), page after page through all of the peer's heads, then pulls of every
 * feed a peer holds more of, batch after batch, the next request in flight while the last
 * batch is verified and written: feeds we lack a few entries of several to a request of a peer
 * that answers those (pull-short.ts), the others one range a request (pull.ts). Only feeds in our
 * replication scope are pulled (scope.ts); feeds of authors with standing in our view first; of the
 * others only a few per session, into the quarantine, while it has room.
 */

import { equals } from 'uint8arrays/equals'
import { entryHashOf, parseAuthor } from '../entries/entry.js'
import { ledgerClosed, LedgerError } from '../errors.js'
import { compareAuthorKeys } from '../store/keys.js'
import type { RateLimit } from '../../node/index.js'
import { type SyncRequest, type SyncResponse } from './protocol.js'
import { pullFeed } from './pull.js'
import { pullShortFeeds, shortSpans } from './pull-short.js'
import { FeedsPulled } from './feeds-pulled.js'
import { SyncRequests } from './requests.js'
import type { ReplicationScope } from './scope.js'
import type { Head } from '../store/store.js'
import type { LedgerIngest } from '../ingest/ingest.js'
import type { Logger, PeerId } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'

/** Pulls started by relayed heads (another author's feed, from a peer that says it holds more) at once. */
const MAX_RELAYED_PULLS = 16
/** Heads exchange and pulls with one peer end after this. */
const SESSION_TIMEOUT_MS = 60_000
/** Most entries pulled from one peer in one session; the next session continues. */
const MAX_PULL_PER_SESSION = 100_000
/** Sessions in a row with one peer while each stops at its pull cap (2 million entries), before the periodic round. */
const MAX_CONTINUED_SESSIONS = 20
/** Retries of a failed background session before waiting for the periodic round. */
const SESSION_RETRIES = 3
/** Peers a periodic round syncs with. */
const PEERS_PER_ROUND = 3
/** Heads compared by reading the stored entry (fork detection below the held head) per session. */
const MAX_FORK_CHECKS = 1024
/** Heads pages asked of one peer per session (10 000 heads each). */
const MAX_HEAD_PAGES = 100
/** Feeds pulled from one peer at once in a session. */
const FEEDS_AT_ONCE = 4
/** A session's wait for a hint's pull of a feed before it pulls it too (a slow relayer delays it no longer). */
const HINT_PULL_WAIT_MS = 2_000
/** Feeds of authors without standing pulled (into the quarantine) per session. */
const MAX_QUARANTINE_PULLS = 32
/** Out-of-scope heads kept per session to re-read once its pulls named more authors. */
const MAX_DEFERRED_HEADS = 20_000
interface ParsedHead { remote: SyncResponse.Head, id: string }

export interface SyncReport {
  peers: number
  pulled: number
  errors: string[]
}

export interface SyncClientOptions {
  connectionManager: ConnectionManager
  /** the ingest step in front of the store, while it is open: what we pull is checked and stored there */
  ledger: () => LedgerIngest | undefined
  /** our own peer id: our head is the hint each heads request carries */
  selfId: string
  /** which feeds we pull (scope.ts); none: every feed */
  scope?: ReplicationScope
  /** aborts every session and pull when the service stops */
  signal: AbortSignal
  log: Logger
  /** sync requests opened to one peer (default SYNC_PACE, requests.ts) */
  pace?: RateLimit
}

export class SyncClient {
  private readonly opts: SyncClientOptions
  private readonly sessions = new Map<string, Promise<number>>()
  private readonly pulls = new Map<string, Promise<void>>()
  /** per pull key: the highest seq hinted while that pull ran */
  private readonly laterHints = new Map<string, number>()
  /** relayed-hint pulls running (considerHint) */
  private relayedPulls = 0
  /** pulls of each feed running, a session's or a hint's (a relayed head starts none beside them) */
  private readonly feedsPulled = new FeedsPulled()
  /** requests to peers, paced (requests.ts) */
  private readonly requests: SyncRequests

  constructor (opts: SyncClientOptions) {
    this.opts = opts
    this.requests = new SyncRequests(opts.connectionManager, () => this.ledger(), opts.pace)
  }

  /** Resolves once every session and pull has ended (after the signal aborted them). */
  async settled (): Promise<void> {
    await Promise.allSettled([...this.sessions.values(), ...this.pulls.values()])
  }

  connectedPeers (): PeerId[] {
    const seen = new Map<string, PeerId>()
    for (const conn of this.opts.connectionManager.getConnections()) {
      if (conn.status === 'open') seen.set(conn.remotePeer.toString(), conn.remotePeer)
    }
    return [...seen.values()]
  }

  /** A round with a few connected peers, picked at random. */
  periodicSync (): void {
    const peers = this.connectedPeers().sort(() => Math.random() - 0.5).slice(0, PEERS_PER_ROUND)
    for (const peer of peers) this.syncInBackground(peer)
  }

  /** A session with one connected peer at random: it may hold what a gossip message builds on. */
  syncWithAnyone (): void {
    const peers = this.connectedPeers()
    if (peers.length > 0) this.syncInBackground(peers[Math.floor(Math.random() * peers.length)])
  }

  /**
   * A session in the background; a failed one is retried a few times, sooner than the periodic
   * round. One that stopped at its pull cap (the peer holds more) goes on at once, up to
   * MAX_CONTINUED_SESSIONS in a row: a fresh node catching up does not wait for the next round.
   */
  syncInBackground (peer: PeerId, attempt = 0, continued = 0): void {
    this.syncWith(peer).then((pulled) => {
      if (pulled < MAX_PULL_PER_SESSION || continued >= MAX_CONTINUED_SESSIONS || this.opts.signal.aborted) return
      setImmediate(() => {
        if (this.connectedPeers().some(p => p.equals(peer))) this.syncInBackground(peer, 0, continued + 1)
      })
    }, (err: unknown) => {
      this.opts.log('sync with %p failed (attempt %d): %e', peer, attempt + 1, err)
      if (attempt >= SESSION_RETRIES || this.opts.signal.aborted) return
      const timer = setTimeout(() => {
        if (this.connectedPeers().some(p => p.equals(peer))) this.syncInBackground(peer, attempt + 1)
      }, 1_000 * 2 ** attempt)
      timer.unref()
    })
  }

  /** A session with every connected peer now, bounded by `timeoutMs`. */
  async syncNow (opts: { timeoutMs?: number } = {}): Promise<SyncReport> {
    const peers = this.connectedPeers()
    const errors: string[] = []
    let pulled = 0
    await Promise.all(peers.map(async (peer) => {
      try {
        pulled += await this.syncWith(peer, opts.timeoutMs ?? SESSION_TIMEOUT_MS)
      } catch (err: any) {
        errors.push(`${peer.toString()}: ${String(err?.message ?? err)}`)
      }
    }))
    return { peers: peers.length, pulled, errors }
  }

  /** Heads exchange with `peer`, then pulls of every feed it holds more of. One session per peer at a time. */
  async syncWith (peer: PeerId, timeoutMs = SESSION_TIMEOUT_MS): Promise<number> {
    const key = peer.toString()
    const running = this.sessions.get(key)
    if (running != null) return await running
    if (this.opts.signal.aborted || this.opts.ledger() == null) return 0
    const session = this.session(peer, AbortSignal.any([this.opts.signal, AbortSignal.timeout(timeoutMs)]))
      .finally(() => { this.sessions.delete(key) })
    this.sessions.set(key, session)
    return await session
  }

  /**
   * A peer told us a head (`seq`) of `authorBytes`' feed: its own (a heads request's or a
   * heartbeat's hint) or, with `relayed`, another author's feed it holds (a heartbeat's relayed
   * heads). When the feed is in our scope and we hold less of it, pull it from that peer now: it
   * may be about to leave, or be the only one we reach that has it. One pull per peer and feed
   * at a time, and at most MAX_RELAYED_PULLS relayed ones in all.
   */
  considerHint (remote: PeerId, authorBytes: Uint8Array, seq: number, opts: { relayed?: boolean } = {}): boolean {
    const author = parseAuthor(authorBytes)
    if (author == null || author.id === this.opts.selfId) return false
    const own = author.id === remote.toString()
    if (!own && opts.relayed !== true) return false
    if (!own && this.opts.scope != null && !this.opts.scope.includes(author.id)) return false
    const held = this.opts.ledger()?.store.head(author.id)?.seq ?? 0
    if (seq <= held) return false
    const key = own ? remote.toString() : `${remote.toString()}/${author.id}`
    // a pull of this feed is running: it goes on once it ends if the hint is beyond what it got
    // (announcements of entries appended during a pull are not lost)
    if (this.pulls.has(key)) {
      this.laterHints.set(key, Math.max(seq, this.laterHints.get(key) ?? 0))
      return true
    }
    // a relayed head is one more way to the entries: not while the feed is pulled from anyone
    if (!own && (this.relayedPulls >= MAX_RELAYED_PULLS || this.feedsPulled.has(author.id))) return false
    if (!own) this.relayedPulls++
    this.feedsPulled.begin(author.id)
    const pull = (async () => {
      try {
        const signal = AbortSignal.any([this.opts.signal, AbortSignal.timeout(SESSION_TIMEOUT_MS)])
        await this.pull(remote, author.peerId.toMultihash().bytes, held + 1, signal)
      } catch (err) {
        this.opts.log('pulling the feed of %s from %p failed: %e', author.id, remote, err)
      } finally {
        this.pulls.delete(key)
        if (!own) this.relayedPulls--
        this.feedsPulled.end(author.id)
        const later = this.laterHints.get(key)
        this.laterHints.delete(key)
        if (later != null && !this.opts.signal.aborted) this.considerHint(remote, authorBytes, later, opts)
      }
    })()
    this.pulls.set(key, pull)
    return true
  }

  /**
   * One page of the heads `peer` holds, after `after` (our own head goes with the request as a
   * hint). The page must be in ascending key order, after the cursor.
   */
  async heads (peer: PeerId, signal: AbortSignal, after?: Uint8Array, limit = 0): Promise<SyncResponse.Heads> {
    const response = await this.requests.request(
      peer,
      { heads: { ...this.ownHint(), afterAuthor: after ?? new Uint8Array(0), limit } },
      signal
    )
    if (response.heads == null) throw new LedgerError('ERR_LEDGER_SYNC', `${peer.toString()} answered a heads request with something else`)
    let previous = after
    for (const head of response.heads.heads) {
      if (previous != null && previous.length > 0 && compareAuthorKeys(previous, head.author) >= 0) throw new LedgerError('ERR_LEDGER_SYNC', `${peer.toString()} sent heads out of order or before the cursor`)
      previous = head.author
    }
    if (response.heads.more && response.heads.heads.length === 0) throw new LedgerError('ERR_LEDGER_SYNC', `${peer.toString()} sent an empty heads page that says more follow`)
    return response.heads
  }

  /** Whether `peer` holds our entry `head` (a range read of it: its answer, not its word, counts). */
  async holds (peer: PeerId, head: Head, signal: AbortSignal): Promise<boolean> {
    const { entries } = await this.requests.rangeRequest(
      peer,
      { author: head.author, fromSeq: head.seq, limit: 1 },
      signal
    )
    if (entries.length === 0) return false
    try {
      return equals(entryHashOf(entries[0] as Uint8Array), head.hash)
    } catch {
      return false
    }
  }

  private async session (peer: PeerId, signal: AbortSignal): Promise<number> {
    const scope = this.opts.scope
    const counts = { pulled: 0, forkChecks: 0, quarantined: 0 }
    // heads out of our replication scope (scope.ts), kept to re-read once this session's pulls
    // named more authors; past the bound only counted
    let deferred: ParsedHead[] = []
    let after: Uint8Array | undefined
    for (let page = 0; page < MAX_HEAD_PAGES && !signal.aborted && counts.pulled < MAX_PULL_PER_SESSION; page++) {
      const { heads, more } = await this.heads(peer, signal, after)
      const parsed = heads.map(remote => {
        const author = parseAuthor(remote.author)
        if (author == null || remote.seq < 1n || remote.seq > BigInt(Number.MAX_SAFE_INTEGER)) throw new LedgerError('ERR_LEDGER_SYNC', `${peer.toString()} sent a malformed head`)
        return { remote, id: author.id }
      })
      const wanted: ParsedHead[] = []
      for (const head of parsed) {
        if (scope == null || scope.includes(head.id)) wanted.push(head)
        else if (deferred.length < MAX_DEFERRED_HEADS) deferred.push(head)
        else scope.noteSkipped(head.id)
      }
      await this.compareAll(peer, wanted, counts, signal)
      if (!more || heads.length === 0) break
      after = heads[heads.length - 1].author
    }
    // the feeds pulled may have named skipped authors (a provider's renters): those are pulled
    // now, one hop further each round
    for (let round = 0; round <= (scope?.horizon ?? -1) && deferred.length > 0 && !signal.aborted; round++) {
      const now = deferred.filter(h => scope?.includes(h.id) === true)
      if (now.length === 0) break
      deferred = deferred.filter(h => scope?.includes(h.id) !== true)
      await this.compareAll(peer, now, counts, signal)
    }
    for (const head of deferred) scope?.noteSkipped(head.id)
    return counts.pulled
  }

  /**
   * Heads of one page: feeds of authors with standing first (the short ones in `ranges` requests,
   * then the rest a few at once: one feed's last batch is written while the next one's verify),
   * so no number of others delays them; the others, into the quarantine, one at a time after them.
   */
  private async compareAll (
    peer: PeerId,
    heads: ParsedHead[],
    counts: { pulled: number, forkChecks: number, quarantined: number },
    signal: AbortSignal
  ): Promise<void> {
    const ledger = this.ledger()
    const admission = ledger.admission
    // of the authors with standing, the feeds a hint's pull is fetching now come once it is over
    // (they were fetched twice); the authors without, last
    let standing: ParsedHead[] = []
    const later: ParsedHead[] = []
    const others: ParsedHead[] = []
    for (const head of heads) {
      if (!(admission?.hasStanding(head.id) ?? true)) others.push(head)
      else if (this.feedsPulled.has(head.id)) later.push(head)
      else standing.push(head)
    }
    // feeds we lack a few entries of: several to a request if the peer answers those (pull-short.ts)
    if (this.requests.answersRangesOf(peer)) {
      const { short, byAuthor, rest } = shortSpans(ledger, standing)
      // counted as pulled while the request runs, as every session pull is
      const maxAdded = MAX_PULL_PER_SESSION - counts.pulled
      const pulls = await this.feedsPulled.during(
        [...byAuthor.values()].map(h => h.id),
        async () => await pullShortFeeds(this.requests, ledger, { peer, spans: short, maxAdded }, signal)
      )
      counts.pulled += pulls.added
      // the feeds it holds more of than its answers carried: pulled on their own from where we are
      standing = [...rest, ...pulls.unfinished.flatMap(author => byAuthor.get(author) ?? [])]
    }
    let next = 0
    // a peer that sent something we refuse ends the session: the other pulls stop too
    let failed = false
    const worker = async (): Promise<void> => {
      while (next < standing.length && !failed && !signal.aborted && counts.pulled < MAX_PULL_PER_SESSION) {
        const head = standing[next++]
        // a hint's pull that began after the heads were read: that feed comes later too
        if (standing !== later && this.feedsPulled.has(head.id)) { later.push(head); continue }
        await this.compare(peer, head, counts, signal).catch((err: unknown) => { failed = true; throw err })
      }
    }
    await Promise.all(Array.from({ length: Math.min(FEEDS_AT_ONCE, standing.length) }, worker))
    // what those pulls left, once they are over (or HINT_PULL_WAIT_MS passed)
    const waitEnds = AbortSignal.timeout(HINT_PULL_WAIT_MS)
    standing = later
    next = 0
    for (const { id } of later) await this.feedsPulled.idle(id, AbortSignal.any([signal, waitEnds]))
    await worker()
    for (const { remote, id } of others) {
      if (signal.aborted || counts.pulled >= MAX_PULL_PER_SESSION) break
      await this.compare(peer, { remote, id }, counts, signal)
    }
  }

  /** One of the peer's heads against ours: pull what we lack, fetch a conflicting entry. */
  private async compare (
    peer: PeerId,
    { remote, id }: ParsedHead,
    counts: { pulled: number, forkChecks: number, quarantined: number },
    signal: AbortSignal
  ): Promise<void> {
    const ledger = this.ledger()
    const seq = Number(remote.seq)
    const admission = ledger.admission
    if (admission != null && !admission.hasStanding(id)) {
      // a feed nobody we trust vouches for: a few per session, while the quarantine has room
      const held = admission.quarantine.seq(id)
      if (seq <= held || counts.quarantined >= MAX_QUARANTINE_PULLS || !admission.quarantine.hasRoom()) return
      counts.quarantined++
      await this.feedsPulled.during(id, async () => await this.pull(peer, remote.author, held + 1, signal))
      return
    }
    const local = ledger.store.head(id)
    if (local == null || seq > local.seq) {
      counts.pulled += await this.feedsPulled.during(
        id,
        async () => await this.pull(peer, remote.author, (local?.seq ?? 0) + 1, signal)
      )
    } else if (counts.forkChecks < MAX_FORK_CHECKS) {
      // the same seq with another hash: fetch theirs, and the ingest step proves the equivocation
      const heldHash =
        seq === local.seq ? local.hash : (counts.forkChecks++, (await ledger.store.get(remote.author, seq))?.hash)
      if (heldHash != null && !equals(heldHash, remote.hash)) {
        await this.requests.fetchAndIngest(peer, { author: remote.author, fromSeq: seq, limit: 1 }, signal)
      }
    }
  }

  private ledger (): LedgerIngest {
    const ledger = this.opts.ledger()
    if (ledger == null) throw ledgerClosed()
    return ledger
  }

  private ownHint (): Omit<SyncRequest.Heads, 'afterAuthor' | 'limit'> {
    const own = this.opts.ledger()?.store.head(this.opts.selfId)
    return own == null
      ? { ownAuthor: new Uint8Array(0), ownSeq: 0n, ownHash: new Uint8Array(0) }
      : { ownAuthor: own.author, ownSeq: BigInt(own.seq), ownHash: own.hash }
  }

  /** Pulls `author`'s feed from `fromSeq` on (pull.ts). Returns the entries added. */
  private async pull (peer: PeerId, author: Uint8Array, fromSeq: number, signal: AbortSignal): Promise<number> {
    return await pullFeed(
      this.requests,
      this.ledger(),
      { peer, author, fromSeq, maxAdded: MAX_PULL_PER_SESSION },
      signal
    )
  }
}
