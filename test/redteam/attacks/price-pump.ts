/**
 * Issue 13 attack 3, anyone sets the price: the attacker's renter key publishes 20 job requests
 * of its own, its second key (the shill) bids 1000 USD/h on each — really published, so every
 * provider hears them — and each is awarded to the shill at 1000 USD/h, hoping providers learn
 * that price. It measures its effect with a probe job (price-probe.ts) before the pump and
 * after it: once its awards went round it prints a progress line with the pump's job ids and
 * waits for the spec's "go" (the spec waits until the providers logged the awards) to probe again.
 * Version 2: the jobs go on their shard, the shill's bids to the renter on the bid stream, and
 * no award is gossiped: an award reaches only its winner (the shill), so no provider hears one.
 */
import { jobShardOf } from '../../../protocols/ids.js'
import { sleep } from '../../../src/common/index.js'
import { bidsDigest } from '../../../src/market/ranking.js'
import { signAward, signBid, usdToMicro } from '../../../src/market/messages.js'
import { type IdlegridNode } from '../../../src/node/index.js'
import { sendBidTo } from '../market-wire.js'
import { numberOption, type Attack } from './attack.js'
import { awardFor, bidFor, jobFor } from './forge.js'
import { probeBids } from './price-probe.js'

const WINDOW_MS = 1_000

export const pricePump: Attack = {
  nodes: 2,
  summary: '20 self-made auctions, shill bids at 1000 USD/h published, awarded to the shill at 1000 USD/h; probes before and after',
  play: async ({ nodes, options, log, report, go }) => {
    const [renter, shill] = nodes as [IdlegridNode, IdlegridNode]
    const auctions = numberOption(options, 'auctions', 20)
    const attackUsd = numberOption(options, 'price', 1000)
    const before = await probeBids(renter, nodes)
    const jobIds: string[] = []
    let awardsSigned = 0
    {
      const made = await Promise.all(Array.from({ length: auctions }, async (_, i) => {
        const job = jobFor(renter, `pump-${i}`, WINDOW_MS)
        jobIds.push(Buffer.from(job.message.jobId).toString('hex'))
        await renter.libp2p.services.pubsub.publish(jobShardOf(job.message.constraints), job.envelope)
        const bid = signBid(shill.privateKey, shill.peerId, bidFor(job.message, shill.peerId, usdToMicro(attackUsd)))
        await sendBidTo(shill, renter.peerId, job.message, bid.envelope).catch(() => {})
        return { job, bid }
      }))
      await sleep(WINDOW_MS)
      for (const { job, bid } of made) {
        const award = signAward(renter.privateKey, renter.peerId, awardFor(job.message, shill.peerId, usdToMicro(attackUsd), {
          bidsDigest: bidsDigest([bid]), winnerBidHash: bid.hash
        }))
        // no awards topic in version 2: the award exists, and only its winner (the shill) could be offered it
        if (award.envelope.length > 0) awardsSigned++
      }
    }
    log(`${awardsSigned} awards at ${attackUsd} USD/h signed; version 2 gossips none`)
    report({ pumped: true, jobIds })
    await go()
    const after = await probeBids(renter, nodes)
    return { auctions, attackUsd, jobIds, before, after }
  }
}
