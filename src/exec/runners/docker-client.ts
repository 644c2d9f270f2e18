/**
 * Talking to the Docker engine besides `docker run`: the client's environment (which engine),
 * a container's state after its run, its removal, and the reason an engine or image error
 * gives, in words a provider and a renter can act on.
 */
import { execFile } from 'node:child_process'
import type { JobLauncher } from './launcher.js'

/** How long one `docker inspect` / `docker rm` / `docker kill` may take. */
const CLIENT_CALL_MS = 20_000
/** Output kept of one such call. */
const CLIENT_OUTPUT_BYTES = 1024 * 1024
/** Variables of the provider that tell the docker client how to reach and trust its engine. */
const ENGINE_VARIABLES = ['DOCKER_TLS_VERIFY', 'DOCKER_CERT_PATH', 'DOCKER_CONFIG'] as const

/**
 * The docker client's environment: PATH and HOME (to find itself and its config), the engine's
 * address (`host`, else the provider's DOCKER_HOST, else the client's default socket or
 * context) and its TLS settings. Never the job's variables: those go in `--env`.
 */
export function dockerClientEnv (host?: string): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' }
  const address = host ?? process.env.DOCKER_HOST
  if (address != null && address !== '') env.DOCKER_HOST = address
  else if (process.env.DOCKER_CONTEXT != null) env.DOCKER_CONTEXT = process.env.DOCKER_CONTEXT
  for (const name of ENGINE_VARIABLES) {
    const value = process.env[name]
    if (value != null) env[name] = value
  }
  return env
}

export interface ClientResult { code: number, stdout: string, stderr: string }

/** Runs the docker client once, bounded in time and output (through `launcher` when given); never throws. */
export async function dockerCall (
  docker: string,
  args: string[],
  env: Record<string, string>,
  launcher?: JobLauncher
): Promise<ClientResult> {
  if (launcher != null) {
    return await launcher.call(docker, args, { env, timeoutMs: CLIENT_CALL_MS, maxBytes: CLIENT_OUTPUT_BYTES })
  }
  return await new Promise(resolve => {
    execFile(docker, args, { env, timeout: CLIENT_CALL_MS, maxBuffer: CLIENT_OUTPUT_BYTES }, (err, stdout, stderr) => {
      const code = err == null ? 0 : typeof (err as any).code === 'number' ? (err as any).code as number : -1
      resolve({ code, stdout: String(stdout), stderr: err != null && stderr === '' ? err.message : String(stderr) })
    })
  })
}

/** What the engine says of a container after its run (`docker inspect`'s State). */
export interface ContainerState {
  started: boolean
  running: boolean
  exitCode: number
  oomKilled: boolean
  /** the engine's error when it could not start the container ("" when none) */
  error: string
}

/** The container's state, or undefined when the engine has no such container (or cannot be asked). */
export async function inspectContainer (
  docker: string,
  name: string,
  env: Record<string, string>,
  launcher?: JobLauncher
): Promise<ContainerState | undefined> {
  const r = await dockerCall(docker, ['inspect', '--type', 'container', '--format', '{{json .State}}', name], env, launcher)
  if (r.code !== 0) return undefined
  try {
    const s = JSON.parse(r.stdout) as Record<string, unknown>
    const startedAt = typeof s.StartedAt === 'string' ? s.StartedAt : ''
    return {
      // the engine writes the zero time for a container that never ran
      started: startedAt !== '' && !startedAt.startsWith('0001-'),
      running: s.Running === true,
      exitCode: typeof s.ExitCode === 'number' ? s.ExitCode : -1,
      oomKilled: s.OOMKilled === true,
      error: typeof s.Error === 'string' ? s.Error : ''
    }
  } catch {
    return undefined
  }
}

/** Removes the container, killing it first if it still runs; a container already gone is fine. */
export async function removeContainer (
  docker: string,
  name: string,
  env: Record<string, string>,
  launcher?: JobLauncher
): Promise<void> {
  await dockerCall(docker, ['rm', '--force', '--volumes', name], env, launcher)
}

/** Last lines of the docker client's stderr, kept to explain a run that never started. */
export class ClientErrors {
  private readonly lines: string[] = []
  constructor (private readonly keep = 8) {}

  push (line: string): void {
    if (line.trim() === '') return
    this.lines.push(line.slice(0, 500))
    if (this.lines.length > this.keep) this.lines.shift()
  }

  text (): string {
    return this.lines.join(' ')
  }
}

/**
 * Why `docker run` failed before the job ran, from the client's stderr: the engine could not
 * be reached, the image is not on the engine, or the engine's own words.
 */
export function engineFailure (stderr: string, image: string, host: string | undefined): string {
  const where = host != null && host !== '' ? host : 'the default socket'
  if (/Cannot connect to the Docker daemon|error during connect|connect: no such file or directory|connection refused|permission denied while trying to connect/i.test(stderr)) {
    return `docker engine not reachable at ${where}`
  }
  if (/No such image|Unable to find image|pull access denied|manifest unknown|repository does not exist/i.test(stderr)) {
    return `image ${image} is not on the docker engine (${where})`
  }
  const said = stderr.replace(/\s*Run 'docker run --help' for more information\s*/g, ' ').replace(/\s+/g, ' ').trim()
  return `docker could not run the job: ${said === '' ? 'no reason given' : said.slice(0, 300)}`
}
