/**
 * Gossip validation of the market's topics, the job shards (protocols/README.md §2 "Job
 * shards"), on every node that joins them, relays included. The gossip router has already
 * checked size, envelope, domain, signature, signer = sender and replays; these checks decode
 * the payload within its bounds, apply the message's own rules, and check that the job belongs
 * to the shard it came on (one shard per job: a copy on another shard is rejected, so nobody
 * can push a job onto providers that cannot serve it). Misbehaviour is rejected (gossipsub
 * scores the sender down); what is merely stale is ignored. Bids and awards are not gossiped
 * in version 2 (bid-stream.ts, award-offers.ts).
 */

import { jobShardOf, JOB_SHARD_TOPICS, type JobShardTopic } from '../../../protocols/ids.js'
import { toHex } from '../../common/index.js'
import { ACCEPT, GOSSIP_CAPABILITY, GOSSIP_SERVICE, ignore, reject, type GossipRouter, type GossipVerdict } from '../../node/index.js'
import { readAward } from './award-check.js'
import { isMessageError } from '../errors.js'
import { readJobRequest } from './messages.js'
import type { OpenedEnvelope } from '../../identity/index.js'
import type { GossipsubEvents } from '@chainsafe/libp2p-gossipsub'
import { serviceDependencies, type PubSub, type Startable } from '@libp2p/interface'

/** The validation service's name in a node's services. */
export const MARKET_VALIDATION_SERVICE = 'marketValidation'

/** Jobs (renter, job id) whose highest award attempt is remembered (oldest forgotten first). */
const MAX_TRACKED_AWARDS = 10_000

function verdictOf (err: unknown): GossipVerdict {
  if (isMessageError(err)) {
    // a message that went stale on the way, or whose sender's clock is wrong, is not
    // misbehaviour to score down (protocols/README.md §9: time rules are Ignore)
    // nor is a field nodes before it could not check (JobRequest.gpus): they relay it in good faith
    return err.reason === 'expired' || err.reason === 'from-the-future' || err.reason === 'too-many-gpus' ? ignore(err.reason) : reject(err.reason)
  }
  return reject(`validator error: ${String((err as Error)?.message ?? err)}`)
}

/** A job request on `topic`: valid, and `topic` is the one shard its constraints name (jobShardOf). */
export function validateJobRequest (envelope: OpenedEnvelope, topic: JobShardTopic, now = Date.now()): GossipVerdict {
  try {
    const job = readJobRequest(envelope, now).message
    const shard = jobShardOf(job.constraints)
    return shard === topic ? ACCEPT : reject('wrong-shard')
  } catch (err) {
    return verdictOf(err)
  }
}

/**
 * Award validation with the memory of the highest attempt seen per job (for whoever still
 * relays awards of version 1, and the conformance vectors). A job is its renter's
 * (renter, job id): another signer's awards under the same id cannot make this one's stale.
 */
export class AwardValidator {
  private readonly attempts = new Map<string, number>()

  validate (envelope: OpenedEnvelope, now = Date.now()): GossipVerdict {
    let attempt: number
    let jobId: string
    try {
      const award = readAward(envelope, now).message
      attempt = award.attempt
      jobId = `${envelope.signer.toString()}/${toHex(award.jobId)}`
    } catch (err) {
      return verdictOf(err)
    }
    const seen = this.attempts.get(jobId)
    if (seen != null && attempt <= seen) return ignore('stale-attempt')
    this.attempts.delete(jobId)
    this.attempts.set(jobId, attempt)
    if (this.attempts.size > MAX_TRACKED_AWARDS) this.attempts.delete(this.attempts.keys().next().value as string)
    return ACCEPT
  }
}

interface ValidationComponents {
  [GOSSIP_SERVICE]: GossipRouter
  pubsub: PubSub<GossipsubEvents>
}

export interface MarketValidationInit {
  /**
   * join every job shard (bootstraps): a renter publishes to a shard it does not join, so it
   * needs a connected peer that has; bootstraps, connected to everyone, are that relay
   */
  joinAllShards?: boolean
}

class MarketValidation implements Startable {
  readonly [serviceDependencies]: string[] = [GOSSIP_CAPABILITY]
  constructor (private readonly components: ValidationComponents, private readonly init: MarketValidationInit) {}

  start (): void {
    for (const topic of JOB_SHARD_TOPICS) {
      this.components[GOSSIP_SERVICE].setValidator(topic, (envelope) => validateJobRequest(envelope, topic))
    }
  }

  // gossipsub accepts subscriptions only once it has started
  afterStart (): void {
    if (this.init.joinAllShards === true) for (const topic of JOB_SHARD_TOPICS) this.components.pubsub.subscribe(topic)
  }

  stop (): void {}
}

/** The job shards' validators; every role runs it (bootstraps relay every shard). */
export function marketValidation (init: MarketValidationInit = {}): (components: ValidationComponents) => Startable {
  return (components) => new MarketValidation(components, init)
}
