/**
 * The demo under `--runner docker`: its jobs run in a small image (by default the busybox one
 * scripts/docker-engine.sh imports), which has no Node, so the batch-scoring job runs its
 * busybox-shell twin (examples/workloads/batch-score.sh) there.
 */
import { execFile } from 'node:child_process'
import { basename, dirname, join } from 'node:path'
import type { JobSpec } from '../market/index.js'

/** The image the demo's docker jobs run in when none is named. */
export const DEFAULT_DEMO_IMAGE = 'idlegrid-busybox:ci'

/** `--image`, else IDLEGRID_DEMO_IMAGE, else DEFAULT_DEMO_IMAGE. */
export function demoImage (flag?: string): string {
  return flag ?? process.env.IDLEGRID_DEMO_IMAGE ?? DEFAULT_DEMO_IMAGE
}

/** The job as it runs in `image`: `node …batch-score.mjs ARGS` becomes `sh …batch-score.sh ARGS`. */
export function dockerVariant (spec: JobSpec, image: string): JobSpec {
  const [program, script, ...args] = spec.runtime.command
  if (program !== 'node' || script == null || !script.endsWith('batch-score.mjs')) return { ...spec, runtime: { ...spec.runtime, image } }
  const inputs = spec.inputs.map(p => basename(p) === 'batch-score.mjs' ? join(dirname(p), 'batch-score.sh') : p)
  return { ...spec, inputs, runtime: { image, command: ['sh', script.replace(/\.mjs$/, '.sh'), ...args] } }
}

/** Throws, saying how to get one, unless the Docker engine (DOCKER_HOST) answers and has `image`. */
export async function checkDemoEngine (image: string): Promise<void> {
  const docker = async (args: string[]): Promise<string | undefined> => await new Promise(resolve => {
    execFile('docker', args, { timeout: 20_000 }, (err, _stdout, stderr) => { resolve(err == null ? undefined : (String(stderr).trim() || err.message)) })
  })
  const where = process.env.DOCKER_HOST ?? 'the default socket'
  const down = await docker(['version', '--format', '{{.Server.Version}}'])
  if (down != null) throw new Error(`--runner docker needs a Docker engine, and none answers at ${where} (${down.split('\n')[0] ?? ''}); as root: eval "$(scripts/docker-engine.sh start)" && scripts/docker-engine.sh image`)
  const missing = await docker(['image', 'inspect', image])
  if (missing != null) throw new Error(`the Docker engine at ${where} has no image ${image}: import the busybox one with scripts/docker-engine.sh image ${image}, or name another with --image`)
}
