/**
 * `idlegrid submit JOB.yaml` without --auction-only: the renter node's submit service
 * (`submit.job`) auctions, ships, runs, verifies and signs the receipt; this file only turns
 * the flags into its request and prints progress lines while it waits and a summary at the
 * end (--json: one object).
 */
import { resolve } from 'node:path'
import { isCoded, shortPeerId } from '../../common/index.js'
import { printable } from '../../exec/index.js'
import { checkSubmission, noPeers, SubmitError, type ReceiptLedger, type SubmitEvent } from '../../submit/index.js'
import { missingBootstrap } from '../../config/index.js'
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
export async function runSubmittedJob (
  spec: JobSpec,
  values: ParsedValues,
  out: Output,
  settleMs: number
): Promise<number> {
  // checked here so a bad job fails before any node starts or auction runs
  let checked: ReturnType<typeof checkSubmission>
  try {
    checked = checkSubmission(spec, values['max-attempts'])
  } catch (err: any) {
    // a bad --max-attempts or job file is the command's mistake: exit 2, as the help says
    if (isCoded(err, SubmitError, 'ERR_SUBMIT')) throw new UsageError(err.message)
    throw err
  }
  const { payload, maxAttempts, timeoutMs } = checked
  const baseDir = resolve(typeof values['out-dir'] === 'string' ? values['out-dir'] : 'idlegrid-out')
  out.info(`submitting ${spec.name} (${spec.tier}, ${spec.workload}, ~${spec.estimatedMinutes} min, ${payload.inputs.length} input files); outputs under ${baseDir}`)
  let answer: Awaited<ReturnType<typeof oneShot>>
  // on a terminal: the auction, transfer and run as a live bar, the lines printed above it
  const view = liveView({ json: out.json })
  try {
    // the renter node records each receipt and waits (bounded) for a peer to confirm holding it
    answer = await oneShot('submit.job', { spec, baseDir, maxAttempts, explain: values.explain === true }, values, {
      settleMs,
      timeoutMs,
      // a short-lived renter with no bootstrap peer would publish to nobody: refused before it starts
      checkShortLived: (config) => { if (missingBootstrap(config) != null) throw noPeers(config.bootstrap) },
      onEvent: (e) => { progress(e as SubmitEvent, view ?? out); view?.event(e as SubmitEvent) }
    })
  } catch (err: any) {
    if (err?.code === 'ERR_UNKNOWN_METHOD') throw new UsageError('the node running on this data directory is not a renter; run submit with another --data-dir (a short-lived renter peer) or against a renter node')
    // ERR_NO_PEERS: from the short-lived check here, or in the node's control answer
    if (err?.code === 'ERR_NO_PEERS') throw new UsageError(String(err.message))
    throw err
  } finally {
    view?.stop()
  }
  const summary = answer.result as Record<string, any>
  out.data({ ...summary, via: answer.via })
  out.info('')
  out.info(`job ${String(summary.jobId)}: ${outcomeLine(summary)}`)
  // details quote what providers sent (paths, reasons): escaped like log lines
  for (const h of summary.history ?? []) out.info(`  attempt ${String(h.attempt)} ${shortPeerId(String(h.provider))}: ${String(h.outcome)}${h.detail != null ? ` (${printable(String(h.detail))})` : ''}`)
  if (summary.attestation != null) out.info(`  attestation: ${String(summary.attestation.status)}, outputs ${String(summary.attestation.outputDigest).slice(0, 16)}… ${summary.attestation.verified === true ? 'verified' : 'NOT verified'}`)
  if (summary.detail != null && summary.status !== 'ok') out.info(`  ${printable(String(summary.detail))}`)
  if (summary.status !== 'no_award') out.info(`  outputs: ${String(summary.outputDir)}/outputs`)
  const receiptSafe = reportReceipt(summary.ledger as ReceiptLedger | undefined, answer.via, out)
  if (summary.status !== 'ok') return EXIT.failure
  return receiptSafe ? EXIT.ok : EXIT.receiptUnconfirmed
}

/** "ok on <provider> after 1 attempt(s)"; a job no provider was awarded has no provider to name. */
function outcomeLine (summary: Record<string, any>): string {
  const attempts = `after ${String(summary.attempts)} attempt(s)`
  if (summary.status === 'no_award' || summary.provider === '') return `${String(summary.status)}, no provider was awarded the job (${attempts})`
  return `${String(summary.status)} on ${shortPeerId(String(summary.provider))} ${attempts}`
}

/**
 * Where the job's receipt is: held by a peer (safe), or only on this machine, said plainly
 * with how to publish it. Returns whether every receipt is written and confirmed.
 */
function reportReceipt (ledger: ReceiptLedger | undefined, via: string, out: Output): boolean {
  if (ledger == null) return true
  const safe = ledger.recorded === ledger.signed && ledger.acknowledged
  if (safe) {
    out.info(`  receipt: ledger entry ${ledger.seq}, held by ${ledger.by.map(shortPeerId).join(', ')}`)
    return true
  }
  if (ledger.recorded < ledger.signed) out.warn(`warning: ${ledger.signed - ledger.recorded} of ${ledger.signed} receipt(s) were NOT written to this node's ledger: ${ledger.error ?? 'unknown error'}; the provider is not paid or rated for them`)
  if (ledger.recorded > 0 && !ledger.acknowledged) {
    const where = via === 'short-lived'
      ? 'it is only on this machine: run `idlegrid ledger flush` with the same --data-dir and --bootstrap to publish it'
      : 'the node running on this data directory keeps it and goes on offering it to its peers; `idlegrid ledger flush` says when one holds it'
    out.warn(`warning: no peer confirmed holding the receipt (ledger entry ${ledger.seq}): ${ledger.note ?? 'no answer'}; ${where}`)
  }
  return false
}

function mib (bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`
}

/**
 * One progress line per event worth printing; whatever a provider sent (log lines, details) has its
 * control characters escaped.
 */
export function progress (e: SubmitEvent, out: Pick<Output, 'info'>): void {
  switch (e.type) {
    case 'auction': {
      const line = auctionEventLine(e.event as Record<string, unknown>, { bids: false })
      if (line != null) out.info(`  auction: ${line}`)
      break
    }
    case 'attempt': out.info(`attempt ${String(e.attempt)} on ${String(e.provider).slice(-8)}`); break
    case 'cache-overclaim':
      out.info(`  ${String(e.provider).slice(-8)} bid as if its input cache held ${mib(e.claimedBytes)} of the job's inputs; it holds ${mib(e.heldBytes)}: no locality credit from this renter for a while (inputs sent)`)
      break
    case 'accepted': out.info('  accepted; running'); break
    case 'log': out.info(`  | ${printable(String(e.line))}`); break
    case 'attempt-ended': if (e.outcome !== 'ok') out.info(`  attempt ${String(e.attempt)} ended ${String(e.outcome)}${e.detail != null ? `: ${printable(String(e.detail))}` : ''}`); break
    case 'receipt': if (e.state === 'waiting') out.info(`  receipt written (ledger entry ${e.seq}); waiting up to ${Math.round(e.timeoutMs / 1000)} s for a peer to hold it…`); break
  }
}
