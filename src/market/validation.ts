/**
 * Gossip validation of the market topics (jobs, bids, awards) on every node, relays
 * included. The gossip router has already checked size, envelope, domain, signature,
 * signer = sender and replays; these checks decode the payload within its bounds and apply
 * the message's own rules. Misbehaviour is rejected (gossipsub scores the sender down);
 * what is merely stale is ignored. Bids are checked without auction context so that any
 * node relays them; the renter judges them against its job.
 */

import { TOPIC } from '../../protocols/ids.js'
import { toHex } from '../common/index.js'
import { ACCEPT, GOSSIP_CAPABILITY, GOSSIP_SERVICE, ignore, reject, type GossipRouter, type GossipVerdict } from '../node/index.js'
import { readAward } from './award-check.js'
import { MarketMessageError } from './errors.js'
import { readBid, readJobRequest } from './messages.js'
import type { OpenedEnvelope } from '../identity/index.js'
import { serviceDependencies, type Startable } from '@libp2p/interface'

/** The validation service's name in a node's services. */
export const MARKET_VALIDATION_SERVICE = 'marketValidation'

/** Jobs (renter, job id) whose highest award attempt is remembered (oldest forgotten first). */
const MAX_TRACKED_AWARDS = 10_000

function verdictOf (err: unknown): GossipVerdict {
  if (err instanceof MarketMessageError) {
    // a message that went stale on the way is not misbehaviour
    return err.reason === 'expired' ? ignore(err.reason) : reject(err.reason)
  }
  return reject(`validator error: ${String((err as Error)?.message ?? err)}`)
}

export function validateJobRequest (envelope: OpenedEnvelope, now = Date.now()): GossipVerdict {
  try {
    readJobRequest(envelope, now)
    return ACCEPT
  } catch (err) {
    return verdictOf(err)
  }
}

export function validateBid (envelope: OpenedEnvelope, now = Date.now()): GossipVerdict {
  try {
    readBid(envelope, now)
    return ACCEPT
  } catch (err) {
    return verdictOf(err)
  }
}

/**
 * Award validation with the memory of the highest attempt seen per job. A job is its renter's
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
}

class MarketValidation implements Startable {
  readonly [serviceDependencies]: string[] = [GOSSIP_CAPABILITY]
  private readonly awards = new AwardValidator()
  constructor (private readonly components: ValidationComponents) {}

  start (): void {
    this.components[GOSSIP_SERVICE].setValidator(TOPIC.jobs, (envelope) => validateJobRequest(envelope))
    this.components[GOSSIP_SERVICE].setValidator(TOPIC.bids, (envelope) => validateBid(envelope))
    this.components[GOSSIP_SERVICE].setValidator(TOPIC.awards, (envelope) => this.awards.validate(envelope))
  }

  stop (): void {}
}

/** The market topics' validators; every role runs it (bootstraps relay market messages too). */
export function marketValidation (): (components: ValidationComponents) => Startable {
  return (components) => new MarketValidation(components)
}
