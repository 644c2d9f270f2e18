import { chmod, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/** Recorded `nvidia-smi --query-gpu=… --format=csv,noheader,nounits` output of a 2x H100 box. */
export const NVIDIA_SMI_2X_H100 = [
  '0, GPU-6f3c2a1e-0000-4000-8000-000000000001, NVIDIA H100 80GB HBM3, 81559, 550.54.15, 9.0, 700.00',
  '1, GPU-6f3c2a1e-0000-4000-8000-000000000002, NVIDIA H100 80GB HBM3, 81559, 550.54.15, 9.0, 700.00'
].join('\n') + '\n'

/**
 * A shell script standing in for a tool: prints `stdout`, `stderr`, exits with `code`;
 * per-subcommand when `byArg` is given.
 */
export async function fakeTool (
  dir: string,
  name: string,
  opts: {
    stdout?: string
    stderr?: string
    code?: number
    byArg?: Record<string, { stdout?: string, stderr?: string, code?: number }>
  }
): Promise<string> {
  const path = join(dir, name)
  const body = (o: { stdout?: string, stderr?: string, code?: number }): string =>
    `printf '%s' ${shq(o.stdout ?? '')}; printf '%s' ${shq(o.stderr ?? '')} >&2; exit ${o.code ?? 0}`
  const cases = Object.entries(opts.byArg ?? {}).map(([arg, o]) => `  ${arg}) ${body(o)} ;;`).join('\n')
  const script = opts.byArg != null
    ? `#!/bin/sh\ncase "$1" in\n${cases}\n  *) ${body(opts)} ;;\nesac\n`
    : `#!/bin/sh\n${body(opts)}\n`
  await writeFile(path, script)
  await chmod(path, 0o755)
  return path
}

function shq (text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`
}
