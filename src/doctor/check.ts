/** One line of `idlegrid doctor`: what was checked, how it went, and the one-line fix when it did not go well. */
export type CheckStatus = 'ok' | 'warn' | 'fail'

export interface CheckResult {
  /** stable id, e.g. "node", "docker.gpu-runtime" */
  id: string
  status: CheckStatus
  /** what was found, one line */
  detail: string
  /** what to do about it, one line (warn and fail) */
  fix?: string
}

export function ok (id: string, detail: string): CheckResult {
  return { id, status: 'ok', detail }
}

export function warn (id: string, detail: string, fix: string): CheckResult {
  return { id, status: 'warn', detail, fix }
}

export function fail (id: string, detail: string, fix: string): CheckResult {
  return { id, status: 'fail', detail, fix }
}

/** First non-empty line of a tool's output or error, bounded: never a wall of text in the report. */
export function oneLine (text: unknown, max = 160): string {
  const line = String(text ?? '').split(/\r?\n/).map(l => l.trim()).find(l => l !== '') ?? ''
  return line.length > max ? line.slice(0, max - 3) + '...' : line
}
