/**
 * What the provider and its job launcher (launcher.ts, launcher-main.ts) say over their IPC
 * channel: local to one machine, between two processes of the same provider, never the network.
 */

/**
 * Output relayed of each child's stdout, and of its stderr: the job log's own bound (supervise.ts,
 * 8 MiB) with room to spare.
 */
export const MAX_RELAYED_BYTES = 9 * 1024 * 1024

export interface LaunchOptions {
  cwd?: string
  env?: Record<string, string>
  uid?: number
  gid?: number
  /** the child leads its own session and process group */
  detached?: boolean
  /** 'ignore' gives it /dev/null for input (default a pipe: the child's stdin) */
  stdin?: 'pipe' | 'ignore'
}

export type LauncherRequest =
  | { op: 'spawn', id: number, file: string, args: string[], options: LaunchOptions }
  | { op: 'stdin', id: number, data?: Uint8Array, end?: boolean }

export type LauncherReply =
  | { op: 'ready' }
  | { op: 'spawned', id: number, pid: number }
  | { op: 'error', id: number, code?: string, message: string }
  | { op: 'data', id: number, fd: 1 | 2, data: Uint8Array }
  | { op: 'exit', id: number, code: number | null, signal: NodeJS.Signals | null }
  | { op: 'close', id: number }
