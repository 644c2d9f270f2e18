/**
 * `idlegrid submit JOB.yaml` without --auction-only: the renter node's submit service
 * (`submit.job`) auctions, ships, runs, verifies and signs the receipt; this file only turns
 * the flags into its request and prints progress lines while it waits and a summary at the
 * end (--json: one object).
 */
import { resolve } from 'node:path'
import { shortPeerId } from '../../common/index.js'
import { printable } from '../../exec/index.js'
import { checkSubmission, type SubmitEvent } from '../../submit/index.js'
import { EXIT, UsageError } from '../errors.js'
import { oneShot } from '../one-shot.js'
import { auctionEventLine } from './auction-events.js'
import { liveView } from '../../observe/index.js'
import type { JobSpec } from '../../market/index.js'
import type { OptionTable, ParsedValues } from '../options.js'
import type { Output } from '../output.js'

/** Flags of the full submit path (besides the job flags). */
export const RUN_JOB_OPTIONS: OptionTable = {
  'out-dir': { type: 'string', valueName: 'DIR', description: 'where outputs go: DIR/<job id>/ (default ./idlegrid-out)' },
  'max-attempts': { type: 'string', valueName: 'N', description: 'attempts (one run on one provider each) before giving up on a job (default 3, at most 10)' }
}

/** Runs the job through the renter node and prints progress and the summary; resolves with the exit code. */
export async function runSubmittedJob (spec: JobSpec, values: ParsedValues, out: Output, settleMs: number): Promise<number> {
  // checked here so a bad job fails before any node starts or auction runs
  let checked: ReturnType<typeof checkSubmission>
  try {
    checked = checkSubmission(spec, values['max-attempts'])
  } catch (err: any) {
    // a bad --max-attempts or job file is the command's mistake: exit 2, as the help says
    if (err?.code === 'ERR_SUBMIT') throw new UsageError(err.message)
    throw err
  }
  const { payload, maxAttempts, timeoutMs } = checked
  const baseDir = resolve(typeof values['out-dir'] === 'string' ? values['out-dir'] : 'idlegrid-out')
  out.info(`submitting ${spec.name} (${spec.tier}, ${spec.workload}, ~${spec.estimatedMinutes} min, ${payload.inputs.length} input files); outputs under ${baseDir}`)
  let answer: Awaited<ReturnType<typeof oneShot>>
  // on a terminal: the auction, transfer and run as a live bar, the lines printed above it
  const view = liveView({ json: out.json })
  try {
    // a short-lived renter waits for another node to hold its receipts, or says they are only local
    answer = await oneShot('submit.job', { spec, baseDir, maxAttempts, explain: values.explain === true }, values, {
      settleMs,
      flushLedger: true,
      timeoutMs,
      onEvent: (e) => { progress(e as SubmitEvent, view ?? out); view?.event(e as SubmitEvent) }
    })
  } catch (err: any) {
    if (err?.code === 'ERR_UNKNOWN_METHOD') throw new UsageError('the node running on this data directory is not a renter; run submit with another --data-dir (a short-lived renter peer) or against a renter node')
    throw err
  } finally {
    view?.stop()
  }
  if (answer.ledgerNote != null) out.warn(`note: ${answer.ledgerNote}`)
  const summary = answer.result as Record<string, any>
  out.data(summary)
  out.info('')
  out.info(`job ${String(summary.jobId)}: ${String(summary.status)} on ${shortPeerId(String(summary.provider))} after ${String(summary.attempts)} attempt(s)`)
  // details quote what providers sent (paths, reasons): escaped like log lines
  for (const h of summary.history ?? []) out.info(`  attempt ${String(h.attempt)} ${shortPeerId(String(h.provider))}: ${String(h.outcome)}${h.detail != null ? ` (${printable(String(h.detail))})` : ''}`)
  if (summary.attestation != null) out.info(`  attestation: ${String(summary.attestation.status)}, outputs ${String(summary.attestation.outputDigest).slice(0, 16)}… ${summary.attestation.verified === true ? 'verified' : 'NOT verified'}`)
  if (summary.detail != null && summary.status !== 'ok') out.info(`  ${printable(String(summary.detail))}`)
  out.info(`  outputs: ${String(summary.outputDir)}/outputs`)
  return summary.status === 'ok' ? EXIT.ok : EXIT.failure
}

/** One progress line per event worth printing; whatever a provider sent (log lines, details) has its control characters escaped. */
export function progress (e: SubmitEvent, out: Pick<Output, 'info'>): void {
  switch (e.type) {
    case 'auction': {
      const line = auctionEventLine(e.event as Record<string, unknown>, { bids: false })
      if (line != null) out.info(`  auction: ${line}`)
      break
    }
    case 'attempt': out.info(`attempt ${String(e.attempt)} on ${String(e.provider).slice(-8)}`); break
    case 'accepted': out.info('  accepted; running'); break
    case 'log': out.info(`  | ${printable(String(e.line))}`); break
    case 'attempt-ended': if (e.outcome !== 'ok') out.info(`  attempt ${String(e.attempt)} ended ${String(e.outcome)}${e.detail != null ? `: ${printable(String(e.detail))}` : ''}`); break
  }
}
