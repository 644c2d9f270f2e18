/**
 * The loop that never loses a job: run an attempt on the awarded provider (exec's
 * runAttempt); when the provider rejects, vanishes, stalls, preempts or returns outputs that
 * do not match its attestation, get a new award elsewhere (excluding it) and try again, a
 * bounded number of times, passing a preempted attempt's verified outputs along as a
 * checkpoint. The loop knows nothing about auctions: awards come from an AwardSource.
 */
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { JobStatus, Receipt } from '../../protocols/job.js'
import { toHex } from '../common/index.js'
import { DiskBudget, renterLimits, runAttempt, type AttemptOptions, type AttemptOutcome, type AttemptResult, type AwardedJob, type JobPayload } from '../exec/index.js'
import type { Signed } from '../identity/index.js'
import { SUBMIT_DEFAULTS } from './payload.js'
import { summaryJson, type JobSummary, type ReceiptLedger } from './summary.js'

/** Outcomes that end the job: the job itself decided (it ran to the end, failed, or hit its limit). */
const FINAL: ReadonlySet<AttemptOutcome> = new Set(['ok', 'failed', 'timeout'])

/** Most inputs a resumed attempt carries (the job's own plus the checkpoint's files). */
const MAX_CHECKPOINT_INPUTS = 4096

/** Where the renter gets its next award: the market's auction, excluding providers that let this job down. */
export interface AwardSource {
  /** an award accepted by its winner, or a thrown error when none can be had */
  next(opts: { exclude: readonly string[], attempt: number, signal?: AbortSignal }): Promise<AwardedJob>
}

export interface RunJobOptions extends Omit<AttemptOptions, 'dir' | 'attempt' | 'disk'> {
  awards: AwardSource
  payload: JobPayload
  /** hex job id: the output dir's name */
  jobId: string
  /** default ./idlegrid-out */
  baseDir?: string
  maxAttempts?: number
  /** where the receipts this renter signs go (one per attempt that got as far), e.g. its ledger */
  receipts?: ReceiptSink
}

/** Takes every receipt the job signs; the job's summary says what became of them. */
export interface ReceiptSink {
  /** resolves once the receipt is written (a failure is kept for settle(), not thrown) */
  record(receipt: Signed<Receipt>): Promise<void>
  /** after the last attempt: the receipts' state, once it is known (bounded) */
  settle(): Promise<ReceiptLedger | undefined>
}

/**
 * Runs the job until one attempt ends on the job's own terms (ok, failed, timeout), or
 * `maxAttempts` are used. The final outputs, attestation and receipt are in
 * `<baseDir>/<jobId>/`; every attempt keeps its own directory under attempts/.
 */
export async function runJob (opts: RunJobOptions): Promise<JobSummary> {
  const jobDir = resolve(opts.baseDir ?? 'idlegrid-out', opts.jobId)
  await mkdir(jobDir, { recursive: true })
  const maxAttempts = Math.max(1, opts.maxAttempts ?? SUBMIT_DEFAULTS.maxAttempts)
  const exclude: string[] = []
  const history: JobSummary['history'] = []
  let payload = opts.payload
  let last: AttemptResult | undefined
  let noAward: string | undefined
  const firstAwardAt = Date.now()
  // what all attempts together may write (logs and outputs): a provider that fails each attempt
  // late cannot fill the disk
  const disk = new DiskBudget(renterLimits(opts.limits).maxJobDiskBytes)
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    if (disk.left <= 0) {
      noAward = 'the job\'s disk budget is spent (limits.maxDiskMiB)'
      break
    }
    let awarded: AwardedJob
    try {
      awarded = await opts.awards.next({ exclude, attempt, signal: opts.signal })
    } catch (err: any) {
      noAward = String(err?.message ?? err)
      break
    }
    const dir = join(jobDir, 'attempts', String(attempt))
    await rm(dir, { recursive: true, force: true })
    last = await runAttempt(awarded, payload, { ...opts, dir, attempt, disk })
    if (last.receipt != null) await opts.receipts?.record(last.receipt)
    history.push({ attempt, provider: last.provider, outcome: last.outcome, detail: last.detail, dir })
    if (FINAL.has(last.outcome) || opts.signal?.aborted === true) break
    exclude.push(last.provider)
    if (last.outcome === 'preempted' && last.verified && last.outputs.length > 0) payload = withCheckpoint(opts.payload, last)
  }
  const summary: JobSummary = {
    jobId: opts.jobId,
    provider: last?.provider ?? '',
    status: last?.outcome ?? 'no_award',
    outputDir: jobDir,
    attempts: history.length,
    history,
    detail: last == null ? noAward : (FINAL.has(last.outcome) ? last.detail : `${last.detail ?? last.outcome}${noAward != null ? `; no further award: ${noAward}` : ''}`)
  }
  if (last != null) await keepLastAttempt(jobDir, last, summary, firstAwardAt)
  const ledger = await opts.receipts?.settle()
  if (ledger != null) summary.ledger = ledger
  await writeFile(join(jobDir, 'summary.json'), JSON.stringify(summaryJson(summary), null, 2) + '\n')
  return summary
}

/** The last attempt's outputs and records become the job's; earlier ones stay under attempts/. */
async function keepLastAttempt (
  jobDir: string,
  last: AttemptResult,
  summary: JobSummary,
  firstAwardAt: number
): Promise<void> {
  await rm(join(jobDir, 'outputs'), { recursive: true, force: true })
  await rename(join(last.dir, 'outputs'), join(jobDir, 'outputs')).catch(async () => { await mkdir(join(jobDir, 'outputs'), { recursive: true }) })
  summary.inputs = { ...last.inputs }
  if (last.attestation != null) {
    summary.attestation = {
      status: JobStatus[last.attestation.message.status] ?? String(last.attestation.message.status),
      outputDigest: toHex(last.attestation.message.outputDigest),
      verified: last.verified,
      gpus: Math.max(1, last.attestation.message.gpus.length),
      envelope: last.attestation.envelope
    }
    await writeFile(join(jobDir, 'attestation.bin'), last.attestation.envelope)
  }
  if (last.receipt != null) {
    summary.receipt = {
      outcome: Receipt.Outcome[last.receipt.message.outcome] ?? String(last.receipt.message.outcome),
      envelope: last.receipt.envelope
    }
    await writeFile(join(jobDir, 'receipt.bin'), last.receipt.envelope)
  }
  if (last.firstLogAt != null) summary.firstLogMs = last.firstLogAt - firstAwardAt
}

/** The next attempt gets the preempted attempt's outputs as inputs under checkpoint/. */
function withCheckpoint (payload: JobPayload, preempted: AttemptResult): JobPayload {
  const original = payload.inputs.filter(i => !i.path.startsWith('checkpoint/'))
  const checkpoint = preempted.outputs.map(o => ({ path: `checkpoint/${o.path}`, file: join(preempted.dir, 'outputs', o.path) }))
  if (original.length + checkpoint.length > MAX_CHECKPOINT_INPUTS) return payload
  // the manifest made for the first inputs no longer describes them
  const { manifest: _old, ...rest } = payload
  return { ...rest, inputs: [...original, ...checkpoint] }
}
