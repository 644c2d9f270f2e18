/**
 * The legacy ledger topic /idlegrid/5/ledger, for nodes that turn it on (off by default:
 * announce.ts and sync carry entries): our new entries are published there, and the topic's
 * validator ingests what others publish. A message that does not extend the feed we hold is
 * not the relayer's fault (it cannot know our view): we pull and compare instead of punishing.
 */

import { SignedEnvelope } from '../../../protocols/envelope.js'
import { TOPIC } from '../../../protocols/ids.js'
import { ACCEPT, ignore, reject, type GossipRouter, type GossipVerdict } from '../../node/index.js'
import { LedgerError } from '../errors.js'
import { isCoded } from '../../common/index.js'
import type { LedgerIngest } from '../ingest/ingest.js'
import type { OpenedEnvelope } from '../../identity/index.js'
import type { GossipsubEvents } from '@chainsafe/libp2p-gossipsub'
import type { Logger, PubSub } from '@libp2p/interface'

export interface LedgerGossipOptions {
  /** read when used: services start together */
  pubsub: () => PubSub<GossipsubEvents>
  gossip: () => GossipRouter
  /** the ingest step, while the ledger is open */
  ledger: () => LedgerIngest | undefined
  /** aborted when the service stops */
  signal: AbortSignal
  /** a message built on entries we lack: pull from a peer */
  onBehind: () => void
  log: Logger
}

export class LedgerGossip {
  private readonly opts: LedgerGossipOptions

  constructor (opts: LedgerGossipOptions) {
    this.opts = opts
  }

  /** Installs the topic's validator. */
  start (): void {
    this.opts.gossip().setValidator(TOPIC.ledger, async (envelope) => await this.validate(envelope))
  }

  /**
   * The topic is off on this node: its messages are ignored unread (not ingested, not
   * relayed). Someone may still push them to us; ignoring does not score down an honest relay.
   */
  refuse (): void {
    this.opts.gossip().setValidator(TOPIC.ledger, () => ignore('ledger topic off here'))
  }

  /** Publishes one of our entries; peers that miss it pull it later. */
  publish (envelope: Uint8Array): void {
    this.opts.pubsub().publish(TOPIC.ledger, envelope).catch((err: unknown) => {
      this.opts.log('ledger entry not published (peers will pull it): %e', err)
    })
  }

  private async validate (envelope: OpenedEnvelope): Promise<GossipVerdict> {
    const ledger = this.opts.ledger()
    if (ledger == null || this.opts.signal.aborted) return ignore('ledger stopping')
    const bytes = SignedEnvelope.encode({
      domain: envelope.domain,
      signer: envelope.signer.toMultihash().bytes,
      payload: envelope.payload,
      signature: envelope.signature
    })
    let outcome
    try {
      // the router verified the envelope's signature already
      [outcome] = await ledger.ingest([bytes], { checkSignature: false })
    } catch (err) {
      if (isCoded(err, LedgerError, 'ERR_LEDGER_CLOSED')) return ignore('ledger stopping')
      throw err
    }
    switch (outcome.status) {
      case 'added': return ACCEPT
      case 'duplicate': return ignore('duplicate')
      // older than what we keep of its feed (retention)
      case 'pruned': return ignore('below the feed\'s base')
      case 'pending':
        this.opts.onBehind()
        return ignore('ahead of the held feed')
      case 'equivocation':
        return ignore('equivocation')
      // its author has no standing here: held in the quarantine, not relayed
      case 'quarantined':
        return ignore('quarantined')
      case 'rejected':
        // the author's quota in our view: the relayer cannot know it
        if (isCoded(outcome.error, LedgerError, 'ERR_LEDGER_QUOTA')) return ignore('quota')
        // a clock rule: the author's clock may be wrong (§9); the entry is pulled by sync once due
        if (isCoded(outcome.error, LedgerError, 'ERR_LEDGER_FUTURE')) return ignore(outcome.error.code)
        if (isCoded(outcome.error, LedgerError, 'ERR_LEDGER_CHAIN')) {
          this.opts.onBehind()
          return ignore('does not extend the held feed')
        }
        return reject(outcome.error.code)
    }
  }
}
