/**
 * Issue 13 attack 5, a renter exhausts the provider: the attacker is a real renter. Its node
 * runs N auctions at once with the project's market renter service (job requests published,
 * bids heard, awards signed and accepted on the accept protocol), then opens every awarded
 * job stream at the same moment, each Start declaring `--input-bytes` of inputs. It notes which
 * streams were answered before it sent a single input byte, then sends every stream's bytes
 * anyway (refused or not), prints a progress line and waits for the spec's "go" (the spec
 * measures the provider meanwhile), and then drops all its streams.
 */
import { createHash } from 'node:crypto'
import { peerIdFromString } from '@libp2p/peer-id'
import { PROTOCOL } from '../../../protocols/ids.js'
import { JobFrame } from '../../../protocols/job.js'
import { CHUNK_BYTES, FrameChannel, frameKind, type ReceivedFrame } from '../../../src/exec/shared/job-stream.js'
import { MARKET_RENTER_SERVICE, parseJobSpec, peerIdFromBytes, type MarketRenterService } from '../../../src/market/index.js'
import { sleep } from '../../../src/common/index.js'
import { waitFor } from '../../utils/wait.js'
import { numberOption, type Attack } from './attack.js'
import type { IdlegridNode } from '../../../src/node/index.js'

interface Awarded { award: Uint8Array, job: Uint8Array, winner: string }

interface HostileStream {
  ch: FrameChannel
  /** the provider's first frame back: Rejected at once, or Accepted once the inputs are in */
  first?: ReceivedFrame
  settled: boolean
  /** why the stream ended without a frame (reset, closed) */
  error?: string
}

/** One auction run by the attacker's own market renter service; the accepted award, or why none. */
async function auctionOne (me: IdlegridNode, i: number): Promise<Awarded | string> {
  const market = (me.libp2p.services as Record<string, unknown>)[MARKET_RENTER_SERVICE] as MarketRenterService
  const spec = parseJobSpec({
    name: `exhaust-${i}`,
    tier: 'silver',
    workload: 'evaluation',
    runtime: { command: ['/bin/sh', '-c', 'sleep 30'] },
    estimatedMinutes: 1,
    auction: { bidWindowMs: 1500, acceptTimeoutMs: 5000 }
  })
  const report = await market.auction(spec, { signal: AbortSignal.timeout(20_000) })
  const award = report.signed?.award
  if (award == null || report.signed == null) return `no award: ${JSON.stringify(report.noAward ?? report.noBids ?? null)}`
  return {
    award: award.envelope,
    job: report.signed.job.envelope,
    winner: peerIdFromBytes(award.message.winner).toString()
  }
}

/** Opens the job stream of `a` and sends its Start, declaring one input of `data`. */
async function openStream (me: IdlegridNode, a: Awarded, data: Buffer): Promise<HostileStream> {
  const stream = await me.libp2p.dialProtocol(peerIdFromString(a.winner), PROTOCOL.job)
  const ch = new FrameChannel(stream, { idleMs: 30_000 })
  const s: HostileStream = { ch, settled: false }
  await ch.send({
    start: {
      award: a.award,
      jobRequest: a.job,
      runtime: { image: '', command: ['/bin/sh', '-c', 'sleep 30'], env: [], timeoutMs: 60_000n, shmSizeMib: 0 },
      inputs: [{ path: 'in.bin', size: BigInt(data.byteLength), sha256: createHash('sha256').update(data).digest() }]
    }
  })
  void ch
    .next(30_000)
    .then(
      f => {
        s.first = f
      },
      (err: Error) => {
        s.error = err.message
      }
    )
    .finally(() => {
      s.settled = true
    })
  return s
}

/** Sends all of `data` and InputEnd, whatever the provider answered (a closed stream ends it). */
async function sendInputs (s: HostileStream, data: Buffer): Promise<void> {
  try {
    for (let offset = 0; offset < data.byteLength; offset += CHUNK_BYTES) {
      await s.ch.send({ inputChunk: { path: 'in.bin', offset: BigInt(offset), data: data.subarray(offset, offset + CHUNK_BYTES) } })
    }
    await s.ch.send({ inputEnd: {} })
  } catch {}
}

const answerOf = (s: HostileStream): string => {
  if (!s.settled) return 'waiting'
  if (s.first == null) return `closed: ${s.error ?? 'no frame'}`
  const kind = frameKind(s.first)
  return kind === 'rejected' ? `rejected ${String(JobFrame.Rejected.Code[s.first.rejected?.code ?? JobFrame.Rejected.Code.OTHER] ?? '')}: ${s.first.rejected?.reason ?? ''}` : kind
}

export const exhaustProvider: Attack = {
  summary: 'N real awards accepted at once, then N job streams opened together, each declaring and sending large inputs',
  play: async ({ nodes: [me], options, log, report, go }) => {
    if (me == null) throw new Error('no node')
    const n = numberOption(options, 'jobs', 8)
    const data = Buffer.alloc(numberOption(options, 'input-bytes', 1_500_000), 7)
    const auctions = await Promise.all(Array.from({ length: n }, async (_, i) => await auctionOne(me, i).catch((err: Error) => `auction failed: ${err.message}`)))
    const awarded = auctions.filter((a): a is Awarded => typeof a !== 'string')
    const failures = auctions.filter((a): a is string => typeof a === 'string')
    log(`${awarded.length} of ${n} awards accepted${failures.length > 0 ? `; ${failures.join('; ')}` : ''}`)
    report({ awarded: awarded.length, winners: [...new Set(awarded.map(a => a.winner))] })
    const streams = await Promise.all(awarded.map(async a => await openStream(me, a, data)))
    // nothing sent yet but the Starts: whatever is answered now was answered before any input byte
    await waitFor(() => streams.filter(s => s.settled).length >= streams.length - 1, { timeoutMs: 15_000, what: 'answers to the Starts' }).catch(() => {})
    await sleep(500)
    const beforeBytes = streams.map(answerOf)
    // refused: a Rejected frame, or the stream closed by the provider, before any input byte
    const refusedBeforeBytes = beforeBytes.filter(a => a.startsWith('rejected') || a.startsWith('closed')).length
    const rejectedFrames = beforeBytes.filter(a => a.startsWith('rejected')).length
    await Promise.all(streams.map(async s => { await sendInputs(s, data) }))
    await waitFor(() => streams.every(s => s.settled), { timeoutMs: 15_000, what: 'answers to every stream' }).catch(() => {})
    const afterBytes = streams.map(answerOf)
    const result = {
      jobs: n,
      awarded: awarded.length,
      awardFailures: failures,
      inputBytesEach: data.byteLength,
      bytesOffered: awarded.length * data.byteLength,
      refusedBeforeBytes,
      rejectedFrames,
      beforeBytes: [...new Set(beforeBytes)],
      accepted: afterBytes.filter(a => a === 'accepted').length,
      answers: [...new Set(afterBytes)]
    }
    report({ streamsOpen: true, ...result })
    await go()
    for (const s of streams) s.ch.abort()
    return result
  }
}
