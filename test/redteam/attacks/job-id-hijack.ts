/**
 * Issue 13 attack 1, job-id hijack: every job request another renter publishes comes back under
 * the attacker's key with the same job id — once with a fresh nonce, once with the victim's —
 * asking for impossible VRAM (nobody bids), hoping providers forget the victim's job (its award
 * declined `unknown-job`). (Version 1 also gossiped an attempt-8 award so relays would drop the
 * victim's as stale; version 2 gossips no awards.)
 */
import { randomBytes } from 'node:crypto'
import { jobShardOf } from '../../../protocols/ids.js'
import { readJobRequest, signJobRequest, type JobRequest } from '../../../src/market/shared/messages.js'
import { onEveryJob } from '../market-wire.js'
import { untilAborted, type Attack } from './attack.js'

/** More VRAM than any GPU has. */
const IMPOSSIBLE_VRAM_MIB = 4_000_000

export const jobIdHijack: Attack = {
  summary: 'republish every job id seen under the attacker\'s key (fresh and victim nonce)',
  play: async ({ nodes: [me], signal, log }) => {
    if (me == null) throw new Error('no node')
    const victims = new Set<string>()
    let copies = 0
    const off = onEveryJob(me, (envelope) => {
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
        // on the copy's own shard (anywhere else it is rejected as wrong-shard); version 2 has no
        // awards topic, so the attempt-8 award of version 1 has nowhere to go
        void me.libp2p.services.pubsub.publish(jobShardOf(copy.message.constraints), copy.envelope)
          .then(() => { copies++ }, (err: Error) => { log(`publish failed: ${err.message}`) })
      }
      log(`hijacking job ${Buffer.from(seen.message.jobId).toString('hex')} of ${seen.signer.toString()}`)
    })
    await untilAborted(signal)
    off()
    return { victims: victims.size, copies, awards: 0 }
  }
}
