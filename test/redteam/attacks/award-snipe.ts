/**
 * Issue 13 attack 2, award sniping: every award another renter publishes is relayed at once to
 * its winner on the accept protocol, as if the attacker were the renter, hoping the winner
 * answers the attacker (and the renter's own request finds the attempt already answered).
 * Plays until stopped, or until `--answers N` relays were answered.
 */
import { MAX_BYTES } from '../../../protocols/codec.js'
import { DOMAIN, PROTOCOL } from '../../../protocols/ids.js'
import { AcceptRequest } from '../../../protocols/market.js'
import { readAward } from '../../../src/market/shared/award-check.js'
import { peerIdFromBytes, readAcceptResponse } from '../../../src/market/shared/messages.js'
import { requestOnce } from '../../../src/node/index.js'
import { onEveryJob } from '../market-wire.js'
import { numberOption, untilAborted, type Attack } from './attack.js'
import type { ConnectionManager } from '@libp2p/interface-internal'

export const awardSnipe: Attack = {
  summary: 'relay every award seen on gossip to its winner before (or instead of) the renter',
  play: async ({ nodes: [me], options, signal, log }) => {
    if (me == null) throw new Error('no node')
    const enough = numberOption(options, 'answers', Infinity)
    const done = new AbortController()
    const answers: Array<{ accepted: boolean, detail: string }> = []
    let relayed = 0
    let failed = 0
    // job requests heard: the attacker sat where a gossiped award would travel (0 would make "no award" vacuous)
    let jobsHeard = 0
    const dialer = {
      openConnection: async (peer: Parameters<typeof me.libp2p.dial>[0], opts?: { signal?: AbortSignal }) =>
        await me.libp2p.dial(peer, opts)
    } as unknown as ConnectionManager
    const pending: Array<Promise<void>> = []
    // version 2 gossips no awards: the attacker listens on every job shard for one (an award there
    // fails the shard's domain check before any handler, so this measures that none gets through)
    const off = onEveryJob(me, (envelope) => {
      if (envelope.domain === DOMAIN.jobRequest) jobsHeard++
      if (envelope.domain !== DOMAIN.award) return
      const award = readAward(envelope)
      if (award.signer.equals(me.peerId)) return
      const winner = peerIdFromBytes(award.message.winner)
      relayed++
      pending.push(
        requestOnce(dialer, winner, {
          protocol: PROTOCOL.accept,
          request: AcceptRequest.encode({ award: award.envelope }),
          maxResponseBytes: MAX_BYTES.acceptResponse + 256,
          signal: AbortSignal.timeout(5_000)
        }).then(
          bytes => {
            const r = readAcceptResponse(bytes, winner)
            answers.push({ accepted: r.accepted, detail: r.detail })
            log(`winner ${winner.toString()} answered the relay: ${r.accepted ? 'accepted' : `declined (${r.detail})`}`)
            if (answers.length >= enough) done.abort()
          },
          (err: Error) => {
            failed++
            log(`relay failed: ${err.message}`)
          }
        )
      )
    })
    await untilAborted(AbortSignal.any([signal, done.signal]))
    off()
    await Promise.all(pending)
    return {
      jobsHeard,
      relayed,
      answered: answers.length,
      accepted: answers.filter(a => a.accepted).length,
      failed,
      details: [...new Set(answers.map(a => a.detail))]
    }
  }
}
