/**
 * Market hole (issue 13, renter side), bid flood: on the first job request another renter
 * publishes, the attacker sends as many bids from its one key as it can until the window
 * closes (`--bids`, default 2,000; straight to the renter on the bid stream, version 2), each a
 * little cheaper than the last and all dearer than an honest provider, hoping to grow the renter's
 * memory and crowd honest bids out of the auction.
 */
import { readJobRequest, signBid, usdToMicro } from '../../../src/market/shared/messages.js'
import { onEveryJob, sendBidTo } from '../market-wire.js'
import { numberOption, untilAborted, type Attack } from './attack.js'
import { bidFor } from './forge.js'

/** bid streams open at once */
const LANES = 16

export const bidFlood: Attack = {
  summary: 'flood one job with bids from one key until its window closes',
  play: async ({ nodes: [me], options, signal, log }) => {
    if (me == null) throw new Error('no node')
    const max = numberOption(options, 'bids', 2_000)
    let published = 0
    let job: string | undefined
    // how long the flood had: a job request seen late (gossip's lazy path) leaves less of the window
    let windowLeftMs: number | undefined
    let floodMs: number | undefined
    let flooding: Promise<void> | undefined
    const off = onEveryJob(me, (envelope) => {
      const seen = readJobRequest(envelope)
      if (seen.signer.equals(me.peerId) || flooding != null) return
      job = Buffer.from(seen.message.jobId).toString('hex')
      const stopAt = Number(seen.message.createdAt) + seen.message.bidWindowMs - 300
      // LANES streams at a time, as a provider with many bids would open them: one at a time a
      // round trip each, the bid stream takes far fewer bids than a window holds
      let next = 0
      const began = Date.now()
      windowLeftMs = stopAt - began
      flooding = (async () => {
        await Promise.all(Array.from({ length: LANES }, async () => {
          for (let i = next++; i < max && Date.now() < stopAt && !signal.aborted; i = next++) {
            const bid = signBid(me.privateKey, me.peerId, bidFor(seen.message, me.peerId, usdToMicro(100) - BigInt(i)))
            await sendBidTo(me, seen.signer, seen.message, bid.envelope).then(() => { published++ }, () => {})
          }
        }))
        floodMs = Date.now() - began
        log(`flooded job ${job ?? ''} with ${published} bids in ${floodMs} ms (${windowLeftMs ?? 0} ms of the window left at the start)`)
      })()
    })
    await untilAborted(signal)
    off()
    await flooding
    return { job, published, windowLeftMs, floodMs }
  }
}
