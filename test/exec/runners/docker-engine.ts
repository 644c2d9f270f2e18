/**
 * The Docker engine the docker runner specs run against: DOCKER_HOST (or the client's default)
 * and IDLEGRID_TEST_DOCKER_IMAGE (default idlegrid-busybox:ci), as .ci/run sets them up with
 * scripts/docker-engine.sh. Without a reachable engine and image the specs skip, saying why.
 */
import { execFileSync } from 'node:child_process'

export const TEST_IMAGE = process.env.IDLEGRID_TEST_DOCKER_IMAGE ?? 'idlegrid-busybox:ci'

const HOW = 'start one with: eval "$(scripts/docker-engine.sh start)" && scripts/docker-engine.sh image (as root), or run .ci/run'

/** Why the real-engine specs cannot run here, or undefined when they can. */
export function engineMissing (): string | undefined {
  try {
    execFileSync('docker', ['version', '--format', '{{.Server.Version}}'], { stdio: 'ignore', timeout: 15_000 })
  } catch {
    return `no Docker engine reachable at ${process.env.DOCKER_HOST ?? 'the default socket'}; ${HOW}`
  }
  try {
    execFileSync('docker', ['image', 'inspect', TEST_IMAGE], { stdio: 'ignore', timeout: 15_000 })
  } catch {
    return `the engine has no image ${TEST_IMAGE}; ${HOW}`
  }
  return undefined
}

/** Containers of a job the engine still has (running or not). */
export function containersOf (jobId: string): string[] {
  const out = execFileSync('docker', ['ps', '-aq', '--filter', `label=idlegrid.job=${jobId}`], { encoding: 'utf8', timeout: 15_000 })
  return out.split('\n').filter(l => l.trim() !== '')
}
