/**
 * "Why not?": when an auction got no (or few) valid bids, the renter asks candidate
 * providers that did not bid over /idlegrid/explain/1.0.0 and counts their signed decline
 * reasons — bounded in how many are asked, how many at once, and time.
 */

import { peerIdFromString } from '@libp2p/peer-id'
import { MAX_BYTES } from '../../../protocols/codec.js'
import { PROTOCOL } from '../../../protocols/ids.js'
import { ExplainRequest } from '../../../protocols/market.js'
import { requestOnce } from '../../node/index.js'
import { declineReasonName, readDecline, type JobRequest } from '../shared/messages.js'
import type { AuctionEvent, DeclineCounts } from './auction-report.js'
import type { Signed } from '../../identity/index.js'
import type { Logger, PeerId } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'

/** Providers asked "why not?" at most, and how many at once. */
const MAX_EXPLAIN = 64
const EXPLAIN_CONCURRENCY = 8
const EXPLAIN_TIMEOUT_MS = 4_000

/** Peers worth asking "why not?" for a job (discovery, heartbeats …). */
export type ExplainCandidates = (job: JobRequest, signal: AbortSignal) => Promise<string[]>

export interface ExplainComponents {
  peerId: PeerId
  connectionManager: ConnectionManager
}

/** Asks candidates that did not bid validly (not in `exclude`) why, bounded in count, parallelism and time. */
export interface WhyNotOptions {
  candidates: ExplainCandidates | undefined
  /** the job asked about, as signed (a provider that missed it can check it) */
  job: Signed<JobRequest>
  /** peers not to ask: those that bid validly */
  exclude: Set<string>
  signal: AbortSignal
  emit: (e: AuctionEvent) => void
  log: Logger
}

export async function askWhyNot (components: ExplainComponents, opts: WhyNotOptions): Promise<DeclineCounts> {
  const { candidates, job: signedJob, exclude, signal, emit, log } = opts
  const job = signedJob.message
  const counts: DeclineCounts = { asked: 0, answered: 0, declines: {}, details: [] }
  const found = await (
    candidates?.(job, AbortSignal.any([signal, AbortSignal.timeout(EXPLAIN_TIMEOUT_MS)])) ?? Promise.resolve([])
  ).catch(err => {
    log('no explain candidates: %e', err)
    return [] as string[]
  })
  const me = components.peerId.toString()
  const peers = [...new Set(found)].filter(p => p !== me && !exclude.has(p)).slice(0, MAX_EXPLAIN)
  if (peers.length === 0) return counts
  emit({ type: 'explain', asked: peers.length })
  const request = ExplainRequest.encode({ jobId: job.jobId, jobRequest: signedJob.envelope })
  const queue = [...peers]
  const worker = async (): Promise<void> => {
    for (let id = queue.shift(); id != null; id = queue.shift()) {
      counts.asked++
      let reason = 'no-answer'
      let detail = ''
      try {
        const peer = peerIdFromString(id)
        const bytes = await requestOnce(components.connectionManager, peer, {
          protocol: PROTOCOL.explain,
          request,
          maxResponseBytes: MAX_BYTES.decline + 256,
          signal: AbortSignal.any([signal, AbortSignal.timeout(EXPLAIN_TIMEOUT_MS)])
        })
        const decline = readDecline(bytes, peer)
        counts.answered++
        reason = declineReasonName(decline.reason)
        detail = decline.detail.slice(0, 256)
      } catch (err: any) {
        detail = String(err?.message ?? err).slice(0, 200)
      }
      counts.declines[reason] = (counts.declines[reason] ?? 0) + 1
      counts.details.push({ provider: id, reason, detail })
    }
  }
  await Promise.all(Array.from({ length: Math.min(EXPLAIN_CONCURRENCY, peers.length) }, worker))
  return counts
}
