/**
 * Issue 12 attack 2, reputation bought at zero cost: the attacker's node key (a provider that
 * never ran a job) attests `--jobs` made-up jobs, each receipted OK by one of `--keys` fresh
 * renter keys; all of it is published on the ledger topic and relayed by the attacker's store.
 * After the spec's "go" it bids on the next job another renter publishes, at the lowest price
 * an honest provider bid for it, hoping its bought reputation wins the auction. Bids go to the
 * renter alone (market version 2), so it learns that price first with a probe job of the same
 * shape (a silver one-minute evaluation, price-probe.ts).
 */
import { LedgerEntry } from '../../../protocols/ledger.js'
import { signTestJob } from '../../../src/ledger/dev.js'
import { readJobRequest, signBid } from '../../../src/market/shared/messages.js'
import { onEveryJob, sendBidTo } from '../market-wire.js'
import { TestFeed } from '../../ledger/flood-fixtures.js'
import { signers } from '../../ledger/feeds.js'
import { waitFor } from '../../utils/wait.js'
import { numberOption, type Attack } from './attack.js'
import { bidFor } from './forge.js'
import { probeBidsMicro } from './price-probe.js'
import { carry, ledgerOf } from './ledger-tools.js'

export const sybilRing: Attack = {
  summary: 'fresh renter keys receipt made-up jobs of the attacker\'s provider key, then it bids at the honest price',
  play: async ({ nodes: [me], options, signal, log, report, go }) => {
    if (me == null) throw new Error('no node')
    const keys = numberOption(options, 'keys', 100)
    const jobs = numberOption(options, 'jobs', 100)
    const ring = (await signers(keys)).map(s => new TestFeed(s))
    const self = { key: me.privateKey, peerId: me.peerId }
    for (let i = 0; i < jobs; i++) {
      const renter = ring[i % keys] as TestFeed
      const job = signTestJob({ provider: self, renter: renter.signer, at: Date.now() })
      await ledgerOf(me).recordAttestation(job.attestation)
      await carry(me, renter.entry(LedgerEntry.BodyKind.RECEIPT, job.receipt).envelope)
    }
    log(`${jobs} jobs receipted by ${keys} ring keys`)
    const honestPrices = Object.values(await probeBidsMicro(me, [me]))
    log(`probe: ${honestPrices.length} honest bids`)
    report({ ringed: true, provider: me.peerId.toString(), keys, jobs })
    await go()

    // the next job of another renter: bid the lowest honest price seen for it
    let jobId: string | undefined
    let job: ReturnType<typeof readJobRequest>['message'] | undefined
    const offJobs = onEveryJob(me, (envelope) => {
      const seen = readJobRequest(envelope)
      if (seen.signer.equals(me.peerId) || job != null) return
      job = seen.message
      renter = seen
      jobId = Buffer.from(seen.message.jobId).toString('hex')
    })
    let renter: ReturnType<typeof readJobRequest> | undefined
    try {
      await waitFor(() => signal.aborted || job != null, { timeoutMs: 60_000, intervalMs: 20, what: 'another renter\'s job' })
      // no honest bid on the probe: no bid at "the same price" to make
      if (job == null || signal.aborted || honestPrices.length === 0) {
        return { provider: me.peerId.toString(), keys, jobs, bid: false }
      }
      const price = honestPrices.reduce((a, b) => (a < b ? a : b))
      const bid = signBid(me.privateKey, me.peerId, bidFor(job, me.peerId, price))
      if (renter != null) await sendBidTo(me, renter.signer, job, bid.envelope)
      log(`bid ${price} µUSD/h on job ${jobId ?? ''}`)
      return {
        provider: me.peerId.toString(),
        keys,
        jobs,
        bid: true,
        jobId,
        priceMicroUsd: price.toString(),
        honestBids: honestPrices.length
      }
    } finally {
      offJobs()
    }
  }
}
