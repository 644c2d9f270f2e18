import { asNumber } from '../../config/index.js'
import { loadJobSpec, type AuctionReport, type BidRow, type JobFlags } from '../../market/index.js'
import { EXIT, UsageError } from '../errors.js'
import { oneShot } from '../one-shot.js'
import { COMMON_OPTIONS, NODE_OPTIONS, type OptionTable } from '../options.js'
import { RUN_JOB_OPTIONS, runSubmittedJob } from './submit-job.js'
import { auctionEventLine } from './auction-events.js'
import { shortPeerId } from '../../common/index.js'
import { printable } from '../../exec/index.js'
import { liveView } from '../../observe/index.js'
import type { Output } from '../output.js'
import type { CommandDefinition } from '../command.js'

/** Flags that describe the job; each overrides the job file's field. */
export const JOB_OPTIONS: OptionTable = {
  name: { type: 'string', valueName: 'NAME', description: 'job name (file: name)' },
  tier: { type: 'string', valueName: 'TIER', description: 'gold (reserved, low latency), silver (on demand) or bronze (interruptible); default silver' },
  workload: { type: 'string', valueName: 'KIND', description: 'inference, training, batch-inference, evaluation or sweep; default inference' },
  gpus: { type: 'string', valueName: 'N', description: 'GPUs on one box, all for this job (default 1, at most 16); the price is per GPU-hour, paid N times' },
  'min-vram': { type: 'string', valueName: 'GB', description: 'memory per GPU, GB as sold (constraints.minVramGb)' },
  gpu: { type: 'string', multiple: true, valueName: 'MODEL', description: 'acceptable GPU model, e.g. h100 or a100-40gb (repeatable)' },
  region: { type: 'string', multiple: true, valueName: 'R', description: 'acceptable provider region, e.g. eu-west (repeatable)' },
  residency: { type: 'string', valueName: 'ZONE', description: 'data residency zone the job must stay in, e.g. eu (hard rule)' },
  'max-price': { type: 'string', valueName: 'USD', description: 'highest price per GPU-hour' },
  'max-latency': { type: 'string', valueName: 'MS', description: 'highest renter-to-provider round trip' },
  'min-reliability': { type: 'string', valueName: 'X', description: 'lowest provider reliability, 0..1' },
  preemptible: { type: 'boolean', description: 'the job tolerates preemption' },
  'no-simulated': { type: 'boolean', description: 'refuse bids on simulated GPUs' },
  'est-minutes': { type: 'string', valueName: 'N', description: 'estimated run time in minutes (default 60)' },
  image: { type: 'string', valueName: 'IMAGE', description: 'container image to run (or give a command after --)' },
  'shm-size': { type: 'string', valueName: 'MIB', description: 'shared memory (/dev/shm) of the job\'s container in MiB (default the engine\'s 64; a provider refuses more than its bound)' },
  'window-ms': { type: 'string', valueName: 'MS', description: 'bid window (default 1000)' },
  'second-price': { type: 'boolean', description: 'winner pays the runner-up\'s score at its own terms (default: its own bid)' }
}

const SUBMIT_OPTIONS: OptionTable = {
  'auction-only': { type: 'boolean', description: 'run the auction and the award, do not ship the job' },
  explain: { type: 'boolean', description: 'when fewer than 3 valid bids arrive, ask the other providers why and count the reasons' },
  wait: { type: 'string', valueName: 'S', description: 'a short-lived peer waits up to S seconds to reach its bootstrap peers (default 3)' }
}

export const submitCommand: CommandDefinition = {
  name: 'submit',
  usage: 'idlegrid submit [JOB.yaml] [--auction-only] [job flags] [options] [-- command args…]',
  options: { ...SUBMIT_OPTIONS, ...RUN_JOB_OPTIONS, ...JOB_OPTIONS, ...NODE_OPTIONS, ...COMMON_OPTIONS },
  allowPositionals: true,
  details: [
    'The job file (YAML, see examples/jobs/) must end in .yaml or .yml; flags override its fields;',
    'arguments after -- are the command. The auction runs on the renter node running on the data',
    'directory, or on a short-lived renter peer (which needs --bootstrap or IDLEGRID_BOOTSTRAP).',
    'Without --auction-only the job runs: outputs, attestation.bin and receipt.bin land in',
    '<out dir>/<job id>/, and a failed, vanished or preempted provider leads to a new auction.',
    'The receipt goes into this node\'s ledger, and submit waits up to 10 s for a peer holding the ledger to',
    'confirm it (--json: the summary\'s ledger field); when none does, `idlegrid ledger flush` publishes it.',
    'Exit codes: 0 awarded and accepted (--auction-only) or the job completed and verified, its receipt held',
    'by a peer; 1 no award, or the job did not complete; 2 bad job or flags, or a node that knows no peers',
    '(nothing is auctioned); 3 the job completed but no peer confirmed its receipt, or it was not written.'
  ].join('\n'),
  run: async (values, positionals, out) => {
    const [first, ...rest] = positionals
    const file = first != null && /\.ya?ml$/i.test(first) ? first : undefined
    const command = file != null ? rest : positionals
    const spec = await loadJobSpec(file, values as JobFlags, command)
    const wait = asNumber(values.wait ?? 3, 'wait', { min: 0, max: 120 })
    // the full path (auction rounds, transfer, run, verify, receipt) is the renter node's submit service
    if (values['auction-only'] !== true) return await runSubmittedJob(spec, values, out, wait * 1000)
    // on a terminal: the bid window as a live bar (bids, best price), the lines printed above it
    const view = liveView({ json: out.json })
    const onEvent = (event: unknown): void => {
      progress(event as Record<string, unknown>, view ?? out)
      view?.event(event as { type: string })
    }
    out.info(`auctioning ${spec.name} (${spec.tier}, ${spec.workload}, ~${spec.estimatedMinutes} min) with a ${spec.auction.bidWindowMs} ms bid window…`)
    let via: string
    let result: unknown
    try {
      ({ via, result } = await oneShot('market.auction', { spec, explain: values.explain === true }, values, { settleMs: wait * 1000, onEvent, timeoutMs: 120_000 }))
    } catch (err: any) {
      if (err?.code === 'ERR_UNKNOWN_METHOD') throw new UsageError('the node running on this data directory is not a renter; run submit with another --data-dir (a short-lived renter peer) or against a renter node')
      throw err
    } finally {
      view?.stop()
    }
    const report = result as AuctionReport
    out.data({ ...report, via })
    printReport(report, out)
    return report.award != null ? EXIT.ok : EXIT.failure
  }
}

function progress (event: Record<string, unknown>, out: Pick<Output, 'info'>): void {
  const line = auctionEventLine(event, { bids: true })
  if (line != null) out.info(`  ${line}`)
}

/** The note of a valid bid's row: the best, and a cache claim that got no locality credit. */
function bidNote (b: BidRow): string {
  const notes = [...(b.rank === 1 ? ['best'] : []), ...(b.noLocality != null ? ['no locality credit: overclaimed its input cache'] : [])]
  return notes.join('; ')
}

function printReport (r: AuctionReport, out: Output): void {
  out.info('')
  out.info(`job ${r.jobId} (${r.name}): ${r.bids.length} bids, ${r.validBids} valid`)
  if (r.bids.length > 0) {
    const rows = r.bids.map((b: BidRow) => [
      b.rank != null ? String(b.rank) : '-', shortPeerId(b.provider), b.price.toFixed(2), b.gpu, `${Math.round(b.vramMib / 1024)}`, b.region,
      b.reliability.toFixed(2), b.rttMs != null ? String(b.rttMs) : '', b.score != null ? b.score.toFixed(3) : '', b.dropped ?? bidNote(b)
    ])
    table(['rank', 'provider', 'USD/h', 'gpu', 'GB', 'region', 'rel', 'rtt', 'score', 'note'], rows, out)
  }
  if (r.award != null) {
    // the price is per GPU-hour: a multi-GPU job pays it on each of its GPUs
    const perHour = r.gpus > 1 ? ` × ${r.gpus} GPUs = ${(r.award.price * r.gpus).toFixed(2)} USD/hour` : ''
    out.info(`awarded to ${r.award.winner} at ${r.award.price.toFixed(2)} USD/GPU-hour${perHour} (attempt ${r.award.attempt}, ${r.award.pricing})`)
    out.info(`  why: ${r.award.reason}`)
    if (r.timings.publishToAcceptedMs != null) out.info(`  accepted ${r.timings.publishToAcceptedMs} ms after publishing`)
  } else if (r.noBids != null) {
    out.info(`no bids: ${r.noBids.reason}`)
    printDeclines(r.noBids.declines, out)
  } else if (r.noAward != null) {
    out.info(`no award: ${r.noAward.reason}`)
  }
  if (r.explain != null && r.explain.asked > 0) {
    out.info(`asked ${r.explain.asked} other providers why they did not bid:`)
    printDeclines(r.explain.declines, out)
  }
}

function printDeclines (declines: Record<string, number>, out: Output): void {
  const entries = Object.entries(declines).sort((a, b) => b[1] - a[1])
  if (entries.length === 0) return
  out.info('  declines by reason:')
  for (const [reason, n] of entries) out.info(`    ${String(n).padStart(3)}  ${reason}`)
}

function table (head: string[], rows: string[][], out: Output): void {
  // bid fields (gpu, region) are the providers' text: escaped before they reach the terminal
  rows = rows.map(r => r.map(printable))
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map(r => (r[i] ?? '').length)))
  const line = (cells: string[]): string => '  ' + cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd()
  out.info(line(head))
  for (const r of rows) out.info(line(r))
}
