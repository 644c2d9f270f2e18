/** Where commands write: data to stdout (JSON lines with --json), diagnostics to stderr. */
export interface Output {
  readonly json: boolean
  /** a human line, printed only without --json */
  info(text: string): void
  /** one JSON line, printed only with --json */
  data(value: unknown): void
  /** a diagnostic on stderr, always */
  warn(text: string): void
}

export function createOutput (
  json: boolean,
  stdout: NodeJS.WritableStream = process.stdout,
  stderr: NodeJS.WritableStream = process.stderr
): Output {
  return {
    json,
    info: (text) => { if (!json) stdout.write(text + '\n') },
    data: (value) => { if (json) stdout.write(JSON.stringify(value) + '\n') },
    warn: (text) => { stderr.write(text + '\n') }
  }
}

export function formatDuration (ms: number): string {
  const s = Math.floor(ms / 1000)
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`
}
