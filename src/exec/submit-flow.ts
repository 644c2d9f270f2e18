/**
 * `idlegrid submit JOB.yaml` without --auction-only: auction, transfer, execution,
 * verification and receipt, run by the renter node (`exec.submit`), with progress lines while
 * it waits and a summary at the end (--json: one object). The CLI passes in how to reach the
 * node (its one-shot helper), so this file depends on no CLI internals.
 */
import { resolve } from 'node:path'
import { payloadFromSpec } from './extensions.js'
import { RENTER_DEFAULTS } from './renter.js'
import type { JobSpec } from '../market/index.js'

/** Flags of the full submit path (besides the job flags). */
export const EXEC_SUBMIT_OPTIONS = {
  'out-dir': { type: 'string', valueName: 'DIR', description: 'where outputs go: DIR/<job id>/ (default ./idlegrid-out)' },
  'max-attempts': { type: 'string', valueName: 'N', description: 'awards tried before giving up on a job (default 3, at most 10)' }
} as const

export interface SubmitOutput {
  readonly json: boolean
  info(text: string): void
  data(value: unknown): void
  warn(text: string): void
}

export type OneShotCall = (method: string, params: Record<string, unknown>, opts: { onEvent: (event: unknown) => void, timeoutMs: number }) => Promise<{ via: string, result: unknown }>

export class SubmitError extends Error {
  static readonly code = 'ERR_SUBMIT'
  readonly code = SubmitError.code
  constructor (message: string) {
    super(message)
    this.name = 'SubmitError'
  }
}

/** Runs the job through the renter node and prints progress and the summary; resolves with the exit code (0 ok, 1 otherwise). */
export async function runSubmitFlow (spec: JobSpec, values: Record<string, unknown>, out: SubmitOutput, call: OneShotCall): Promise<number> {
  const maxAttempts = values['max-attempts'] == null ? RENTER_DEFAULTS.maxAttempts : Number(values['max-attempts'])
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 10) throw new SubmitError(`--max-attempts must be a whole number from 1 to 10, got ${String(values['max-attempts'])}`)
  // checked here so a bad job fails before any auction
  const payload = payloadFromSpec(spec)
  if (payload.runtime.command.length === 0 && (payload.runtime.image ?? '') === '') throw new SubmitError('the job has neither an image nor a command')
  const baseDir = resolve(typeof values['out-dir'] === 'string' ? values['out-dir'] : 'idlegrid-out')
  // every attempt may use its whole time limit plus the auction and transfers
  const timeoutMs = maxAttempts * (payload.runtime.timeoutMs + 5 * 60_000)
  out.info(`submitting ${spec.name} (${spec.tier}, ${spec.workload}, ~${spec.estimatedMinutes} min, ${payload.inputs.length} input files); outputs under ${baseDir}`)
  const { result } = await call('exec.submit', { spec, baseDir, maxAttempts, explain: values.explain === true }, { onEvent: (e) => { progress(e as Record<string, any>, out) }, timeoutMs })
  const summary = result as Record<string, any>
  out.data(summary)
  const short = (id: string): string => id.length > 16 ? `${id.slice(0, 8)}…${id.slice(-6)}` : id
  out.info('')
  out.info(`job ${String(summary.jobId)}: ${String(summary.status)} on ${short(String(summary.provider))} after ${String(summary.attempts)} attempt(s)`)
  for (const h of summary.history ?? []) out.info(`  attempt ${String(h.attempt)} ${short(String(h.provider))}: ${String(h.outcome)}${h.detail != null ? ` (${String(h.detail)})` : ''}`)
  if (summary.attestation != null) out.info(`  attestation: ${String(summary.attestation.status)}, outputs ${String(summary.attestation.outputDigest).slice(0, 16)}… ${summary.attestation.verified === true ? 'verified' : 'NOT verified'}`)
  if (summary.detail != null && summary.status !== 'ok') out.info(`  ${String(summary.detail)}`)
  out.info(`  outputs: ${String(summary.outputDir)}/outputs`)
  return summary.status === 'ok' ? 0 : 1
}

function progress (e: Record<string, any>, out: SubmitOutput): void {
  switch (e.type) {
    case 'auction': {
      const a = e.event as Record<string, any>
      if (a.type === 'published') out.info(`  auction: job ${String(a.jobId)} published`)
      else if (a.type === 'award') out.info(`  auction: award to ${String(a.winner).slice(-8)} at ${Number(a.price).toFixed(2)} USD/GPU-h`)
      else if (a.type === 'accept' && a.outcome !== 'accepted') out.info(`  auction: ${String(a.winner).slice(-8)} ${String(a.outcome)}`)
      break
    }
    case 'attempt': out.info(`attempt ${String(e.attempt)} on ${String(e.provider).slice(-8)}`); break
    case 'accepted': out.info('  accepted; running'); break
    case 'log': out.info(`  | ${String(e.line)}`); break
    case 'attempt-ended': if (e.outcome !== 'ok') out.info(`  attempt ${String(e.attempt)} ended ${String(e.outcome)}${e.detail != null ? `: ${String(e.detail)}` : ''}`); break
  }
}
