/**
 * What the renter accepts from a provider in one attempt, enforced by the renter whatever the
 * provider claims to cap: log bytes, output files, directory depth, output bytes and a hard
 * deadline (the job's time limit + grace, at least the job's preemption notice, + margin;
 * Progress frames do not extend it). A provider past any of them fails the attempt
 * (`bad_output`, or `lost` for the deadline) and the job is re-auctioned. Also: control characters
 * escaped before anything from a provider is printed.
 */
import { renterLimitError } from '../errors.js'

const MiB = 1024 * 1024

export interface RenterLimits {
  /** bytes of log lines (as received, UTF-8) kept in log.txt */
  maxLogBytes: number
  /** output files */
  maxFiles: number
  /** directories above an output file (a/b/c.txt is depth 2) */
  maxDepth: number
  /** output bytes in all */
  maxOutputBytes: number
  /** the provider's grace after the job's time limit (stop, collect outputs) */
  deadlineGraceMs: number
  /** added to time limit + grace for the transfer of the outputs */
  deadlineMarginMs: number
  /** log and output bytes written to disk by all of one job's attempts together (submit's job loop) */
  maxJobDiskBytes: number
}

/** Defaults (README.md "Renter limits"; per job under `limits:` in the job file). */
export const RENTER_LIMITS: Readonly<RenterLimits> = {
  maxLogBytes: 16 * MiB,
  maxFiles: 4096,
  maxDepth: 32,
  maxOutputBytes: 4 * 1024 * MiB,
  deadlineGraceMs: 30_000,
  deadlineMarginMs: 30_000,
  maxJobDiskBytes: 8 * 1024 * MiB
}

/** Bytes the renter may still write to disk for one job, shared by its attempts' logs and outputs. */
export class DiskBudget {
  constructor (public left: number) {}

  /** Takes `bytes`; ExecError ERR_RENTER_LIMIT (disk) when that is more than is left. */
  take (bytes: number): void {
    this.left -= bytes
    if (this.left < 0) throw renterLimitError('disk', 'the job\'s attempts wrote more log and output bytes than the renter\'s disk budget for the job')
  }
}

/** The limits with `overrides` applied (undefined fields keep the default). */
export function renterLimits (overrides: Partial<RenterLimits> = {}): RenterLimits {
  const out: RenterLimits = { ...RENTER_LIMITS }
  for (const [k, v] of Object.entries(overrides) as Array<[keyof RenterLimits, number | undefined]>) {
    if (v != null) out[k] = v
  }
  return out
}

/**
 * The hard deadline of an attempt's run, from its Accepted frame: time limit + grace + margin,
 * where the grace is at least the job's own minimum preemption notice. A job preempted just
 * before its time limit gets SIGTERM, then that notice before SIGKILL, then its outputs go out:
 * an honest provider may legitimately take that long.
 */
export function runDeadlineMs (timeoutMs: number, limits: RenterLimits, minNoticeMs = 0): number {
  return timeoutMs + deadlineGraceMs(limits, minNoticeMs) + limits.deadlineMarginMs
}

/** The grace the deadline allows after the time limit: the renter's, or the job's notice when longer. */
export function deadlineGraceMs (limits: RenterLimits, minNoticeMs = 0): number {
  return Math.max(limits.deadlineGraceMs, minNoticeMs)
}

// C0 controls, DEL and C1 controls; also the line and paragraph separators and bidi overrides that reorder what follows
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g // eslint-disable-line no-control-regex

/** A string from a peer made safe to print: every control character as \xNN or \uNNNN (a tab stays a tab). */
export function printable (text: string): string {
  return text.replace(CONTROL, c => {
    if (c === '\t') return c
    const code = c.charCodeAt(0)
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
  })
}
