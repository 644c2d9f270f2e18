/** Shared pieces of the serve specs: the sentiment service as a spec object, HTTP helpers. */
import { chmod } from 'node:fs/promises'
import { request } from 'node:http'
import { fileURLToPath } from 'node:url'
import { callControl } from '../../src/control/index.js'
import { DEFAULT_PROVIDER_ARGS, startLocalNetwork, type LocalNetwork } from '../utils/index.js'

export const REPO = fileURLToPath(new URL('../../../', import.meta.url))
export const SERVICES_DIR = `${REPO}examples/services`

/**
 * examples/services/sentiment.yaml's fields, sized for a test: `replicas` anywhere, a short minimum
 * lease, a fast bid window.
 */
export function sentimentSpec (over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'sentiment',
    runtime: { command: ['node', 'inputs/server.mjs'] },
    files: {
      'server.mjs': 'sentiment/server.mjs',
      'node_modules/wink-nlp': '../../node_modules/wink-nlp',
      'node_modules/wink-eng-lite-web-model': '../../node_modules/wink-eng-lite-web-model'
    },
    health: '/health',
    replicas: 2,
    lease: { untilStopped: true, minMinutes: 1 },
    limits: { timeoutSeconds: 10, maxBodyKiB: 64 },
    auction: { bidWindowMs: 400 },
    ...over
  }
}

/**
 * A bound a spec is not about: far above the stalls of a loaded machine (the suite's two jobs on
 * 2 shared cores stall a process for seconds), so a request that should succeed never ends on it.
 * At 2 s, the gateway's bound turned echo answers into 504s under load. A spec that tests a
 * bound sets that one short itself.
 */
export const ROOMY_MS = 15_000

export interface HttpAnswer { status: number, body: string, headers: Record<string, string | string[] | undefined> }

/** One HTTP request; never rejects (a transport failure is status 0). */
export async function http (
  url: string,
  opts: { method?: string, body?: string | Buffer, headers?: Record<string, string>, timeoutMs?: number } = {}
): Promise<HttpAnswer> {
  return await new Promise(resolve => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers, timeout: opts.timeoutMs ?? 20_000 }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }) })
      res.on('error', () => { resolve({ status: 0, body: '', headers: {} }) })
    })
    req.on('timeout', () => { req.destroy(new Error('timeout')) })
    req.on('error', (err) => { resolve({ status: 0, body: String(err.message), headers: {} }) })
    req.end(opts.body)
  })
}

/**
 * A bootstrap, `providers` provider processes running leases with the process runner (or `runner`'s
 * flags), one renter process.
 */
export async function startServeNetwork (baseDir: string, providers: number, regions: string[] = ['eu-west', 'us-east'], runner: readonly string[] = ['--runner', 'process']): Promise<LocalNetwork> {
  // jobs run as another user when we are root: it must pass through to the work roots
  await chmod(baseDir, 0o711)
  return await startLocalNetwork({
    baseDir,
    providers,
    renters: 1,
    // a usage statement per lease every second (default 60): the specs see one made while they run
    providerArgs: (i) => [...DEFAULT_PROVIDER_ARGS.filter((a, k, all) => a !== '--region' && all[k - 1] !== '--region'), '--region', regions[i % regions.length] as string, ...runner, '--usage-interval-seconds', '1']
  })
}

export async function control (
  dataDir: string,
  method: string,
  params: Record<string, unknown> = {},
  timeoutMs = 60_000
): Promise<any> {
  return await callControl(dataDir, method, params, { timeoutMs })
}

const TEXTS = ['What a lovely day, I love it', 'This is terrible and I hate it', 'The service is fast and excellent']

export interface LoadResult {
  ok: number
  failed: Array<{ i: number, status: number, body: string, post: boolean }>
  replicas: Set<string>
}

/**
 * `n` requests to the sentiment service (or its busybox twin, `path` /cgi-bin/sentiment.sh)
 * through the gateway at `url`, `concurrency` at a time: each answer must be 200 with the
 * text's sign (the second text is negative). `post(i)`: request i is a POST of JSON.
 */
export async function sentimentLoad (
  url: string,
  n: number,
  opts: {
    onAnswer?: (done: number) => void
    post?: (i: number) => boolean
    stop?: () => boolean
    path?: string
    concurrency?: number
  } = {}
): Promise<LoadResult> {
  const path = opts.path ?? '/sentiment'
  let next = 0
  let done = 0
  const failed: LoadResult['failed'] = []
  const replicas = new Set<string>()
  let ok = 0
  await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, async () => {
    while (next < n && opts.stop?.() !== true) {
      const i = next++
      const text = TEXTS[i % TEXTS.length] as string
      const post = opts.post?.(i) === true
      const answer = post
        ? await http(`${url}${path}`, { method: 'POST', body: JSON.stringify({ text }), headers: { 'content-type': 'application/json' } })
        : await http(`${url}${path}?text=${encodeURIComponent(text)}`)
      let good = false
      if (answer.status === 200) {
        try {
          const body = JSON.parse(answer.body)
          good = typeof body.sentiment === 'number' && (i % TEXTS.length === 1 ? body.sentiment < 0 : body.sentiment > 0)
          replicas.add(String(body.replica))
        } catch {}
      }
      if (good) ok++
      else failed.push({ i, status: answer.status, body: answer.body.slice(0, 200), post })
      opts.onAnswer?.(++done)
    }
  }))
  return { ok, failed, replicas }
}
