/**
 * The progress bar (cli-progress) for interactive runs; silent when stdout is not a TTY or
 * output is JSON, so logs and pipes stay clean.
 */

import cliProgress from 'cli-progress'
import type { Mode } from './engine/engine.js'

export interface Progress {
  update(mode: Mode, done: number, total: number): void
  stop(): void
}

export function progressBar (enabled: boolean, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!enabled || stream.isTTY !== true) return { update: () => {}, stop: () => {} }
  const bar = new cliProgress.SingleBar({ format: '{mode} [{bar}] {percentage}% | {value}/{total} jobs', stream, hideCursor: true }, cliProgress.Presets.shades_classic)
  let current: Mode | undefined
  return {
    update: (mode, done, total) => {
      if (mode !== current) {
        if (current != null) bar.stop()
        current = mode
        bar.start(total, done, { mode })
      } else {
        bar.update(done)
      }
    },
    stop: () => { if (current != null) bar.stop() }
  }
}
