/**
 * Issue 13 attack 3, anyone sets the price: the attacker's renter key publishes 20 job requests
 * of its own, its second key (the shill) bids 1000 USD/h on each — really published, so every
 * provider hears them — and each is awarded to the shill at 1000 USD/h, hoping providers learn
 * that price. It measures its effect with a probe job (price-probe.ts) before the pump and
 * after it: once its awards went round it prints a progress line with the pump's job ids and
 * waits for the spec's "go" (the spec waits until the providers logged the awards) to probe again.
 */
import { TOPIC } from '../../../protocols/ids.js'
import { sleep } from '../../../src/common/index.js'
import { bidsDigest } from '../../../src/market/ranking.js'
import { readAward } from '../../../src/market/award-check.js'
import { signAward, signBid, usdToMicro } from '../../../src/market/messages.js'
import { GOSSIP_SERVICE, type IdlegridNode } from '../../../src/node/index.js'
import { waitFor } from '../../utils/wait.js'
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
    const awardsSeen = new Set<string>()
    const off = shill.libp2p.services[GOSSIP_SERVICE].onMessage(TOPIC.awards, (envelope) => {
      const award = readAward(envelope)
      if (award.signer.equals(renter.peerId)) awardsSeen.add(Buffer.from(award.message.jobId).toString('hex'))
    })
    try {
      const made = await Promise.all(Array.from({ length: auctions }, async (_, i) => {
        const job = jobFor(renter, `pump-${i}`, WINDOW_MS)
        jobIds.push(Buffer.from(job.message.jobId).toString('hex'))
        await renter.libp2p.services.pubsub.publish(TOPIC.jobs, job.envelope)
        const bid = signBid(shill.privateKey, shill.peerId, bidFor(job.message, shill.peerId, usdToMicro(attackUsd)))
        await shill.libp2p.services.pubsub.publish(TOPIC.bids, bid.envelope)
        return { job, bid }
      }))
      await sleep(WINDOW_MS)
      for (const { job, bid } of made) {
        const award = signAward(renter.privateKey, renter.peerId, awardFor(job.message, shill.peerId, usdToMicro(attackUsd), {
          bidsDigest: bidsDigest([bid]), winnerBidHash: bid.hash
        }))
        await renter.libp2p.services.pubsub.publish(TOPIC.awards, award.envelope)
      }
      // the awards went round: the shill heard them all
      await waitFor(() => awardsSeen.size === auctions, { timeoutMs: 10_000, what: 'the pump\'s awards to go round' })
    } finally {
      off()
    }
    log(`${auctions} awards at ${attackUsd} USD/h published`)
    report({ pumped: true, jobIds })
    await go()
    const after = await probeBids(renter, nodes)
    return { auctions, attackUsd, jobIds, before, after }
  }
}
