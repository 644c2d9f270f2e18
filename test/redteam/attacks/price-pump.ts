/**
 * Issue 13 attack 3, anyone sets the price: the attacker's renter key publishes 20 job requests
 * of its own, its second key (the shill) bids 1000 USD/h on each, and the attacker measures its
 * effect with a probe job (price-probe.ts) before the pump and after it: once its awards went
 * out it prints a progress line with the pump's job ids and waits for the spec's "go" (the spec
 * waits until the providers logged the awards) to probe again.
 * Version 2 gossips no award: the only way left to teach a provider a price is an award it is
 * offered on the accept stream. So each pump job is awarded at 1000 USD/h to every honest
 * provider that bid on it, naming that provider's own bid, as a renter would offer it.
 */
import { jobShardOf, PROTOCOL } from '../../../protocols/ids.js'
import { MAX_BYTES } from '../../../protocols/codec.js'
import { AcceptRequest } from '../../../protocols/market.js'
import { sleep } from '../../../src/common/index.js'
import { answerBid, MAX_BID_REQUEST_BYTES } from '../../../src/market/shared/bid-stream.js'
import { bidsDigest } from '../../../src/market/shared/ranking.js'
import { readAcceptResponse, signAward, signBid, usdToMicro, type Bid } from '../../../src/market/shared/messages.js'
import { requestOnce, serveOnce, type IdlegridNode } from '../../../src/node/index.js'
import { defaultLogger } from '@libp2p/logger'
import type { Signed } from '../../../src/identity/index.js'
import { componentsOf, connectionManagerOf } from '../../utils/components.js'
import { sendBidTo } from '../market-wire.js'
import { numberOption, type Attack } from './attack.js'
import { awardFor, bidFor, jobFor } from './forge.js'
import { probeBids } from './price-probe.js'

const WINDOW_MS = 1_000

export const pricePump: Attack = {
  nodes: 2,
  summary: '20 self-made auctions, shill bids at 1000 USD/h; each honest bidder offered an award at 1000 USD/h on its own bid; probes before and after',
  play: async ({ nodes, options, log, report, go }) => {
    const [renter, shill] = nodes as [IdlegridNode, IdlegridNode]
    const auctions = numberOption(options, 'auctions', 20)
    const attackUsd = numberOption(options, 'price', 1000)
    const before = await probeBids(renter, nodes)
    const jobIds: string[] = []
    // honest bids on the pump jobs, by job id (the renter takes the bid stream over for the pump)
    const honestBids = new Map<string, Array<Signed<Bid>>>()
    const { registrar } = componentsOf(renter)
    await renter.libp2p.unhandle(PROTOCOL.bid)
    await serveOnce(registrar, PROTOCOL.bid, async (request, remote) => answerBid(request, remote, (bid) => {
      const id = Buffer.from(bid.message.jobId).toString('hex')
      if (!jobIds.includes(id) || nodes.some(n => n.peerId.equals(bid.signer))) return 'unknown-auction'
      honestBids.set(id, [...(honestBids.get(id) ?? []), bid])
      return 'kept'
    }), { maxRequestBytes: MAX_BID_REQUEST_BYTES, timeoutMs: 5_000, log: defaultLogger().forComponent('redteam:pump') })
    let offered = 0
    let accepted = 0
    const declines: string[] = []
    try {
      const made = await Promise.all(Array.from({ length: auctions }, async (_, i) => {
        const job = jobFor(renter, `pump-${i}`, WINDOW_MS)
        jobIds.push(Buffer.from(job.message.jobId).toString('hex'))
        await renter.libp2p.services.pubsub.publish(jobShardOf(job.message.constraints), job.envelope)
        const bid = signBid(shill.privateKey, shill.peerId, bidFor(job.message, shill.peerId, usdToMicro(attackUsd)))
        await sendBidTo(shill, renter.peerId, job.message, bid.envelope).catch(() => {})
        return { job, bid }
      }))
      // the window, and half a second more for the last bids
      await sleep(WINDOW_MS + 500)
      const cm = connectionManagerOf(renter)
      await Promise.all(made.map(async ({ job, bid }) => {
        for (const theirs of honestBids.get(Buffer.from(job.message.jobId).toString('hex')) ?? []) {
          const award = signAward(
            renter.privateKey,
            renter.peerId,
            awardFor(job.message, theirs.signer, usdToMicro(attackUsd), {
              bidsDigest: bidsDigest([theirs, bid]),
              winnerBidHash: theirs.hash,
              validBids: 2
            })
          )
          offered++
          try {
            const bytes = await requestOnce(cm, theirs.signer, {
              protocol: PROTOCOL.accept,
              request: AcceptRequest.encode({ award: award.envelope }),
              maxResponseBytes: MAX_BYTES.acceptResponse + 256,
              signal: AbortSignal.timeout(5_000)
            })
            const answer = readAcceptResponse(bytes, theirs.signer)
            if (answer.accepted) accepted++
            else declines.push(answer.detail)
          } catch (err: any) {
            declines.push(`no answer: ${String(err?.message ?? err)}`)
          }
        }
      }))
    } finally {
      await renter.libp2p.unhandle(PROTOCOL.bid)
    }
    log(`${offered} awards at ${attackUsd} USD/h offered to honest bidders: ${accepted} accepted, declines ${JSON.stringify([...new Set(declines)])}`)
    report({ pumped: true, jobIds: jobIds.filter(id => honestBids.has(id)), offered, accepted })
    await go()
    const after = await probeBids(renter, nodes)
    return { auctions, attackUsd, jobIds, offered, accepted, declines: [...new Set(declines)], before, after }
  }
}
