/**
 * The demo's services act (`idlegrid demo --services`): the sentiment service of
 * examples/services/ deployed as two leases, one in the EU and one in the US; a burst of
 * requests through the renter's gateway; one replica's service process killed; the traffic
 * moving to the other replica while the deployment auctions a replacement; the replacement
 * arriving and taking its share. Everything it shows is read back from the nodes. Under
 * `--runner docker` the service is its busybox twin (examples/services/sentiment-sh.yaml, in the
 * demo's image) and the replica is killed by killing its container.
 */
import { execFile } from 'node:child_process'
import { request } from 'node:http'
import { fileURLToPath } from 'node:url'
import { waitUntil } from '../common/index.js'
import { callControl } from '../control/index.js'
import { readJobFile } from '../market/index.js'
import type { DemoRunner } from './fleet.js'
import type { LocalNetwork } from './local-network.js'
import type { DemoOutput } from './summary.js'

const SERVICES_DIR = fileURLToPath(new URL('../../../examples/services/', import.meta.url))
const TEXTS = ['What a lovely day, I love it', 'This is terrible and I hate it', 'The service is fast and excellent']
const CONCURRENCY = 8

/** failures: the first few failed answers (status and body), to say why */
export interface LoadReport {
  requests: number
  failed: number
  byProvider: Record<string, number>
  failures?: string[]
}

export interface ServicesActReport {
  ok: boolean
  deployed: Array<{ region: string, provider: string }>
  burst: LoadReport
  /** pid: the service process killed (process runner); container: the container killed (docker) */
  killed?: { region: string, provider: string, pid?: number, container?: string }
  /** from the kill until the replacement is ready */
  meanwhile?: LoadReport
  replacement?: { provider: string, readyAfterMs: number }
  after?: LoadReport
  detail?: string
}

interface Replica { id: string, provider: string, region: string, state: string }

async function getJson (url: string, timeoutMs = 10_000): Promise<{ status: number, body: any }> {
  return await new Promise(resolve => {
    const req = request(url, { timeout: timeoutMs }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        let body: any
        try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')) } catch {}
        resolve({ status: res.statusCode ?? 0, body })
      })
      res.on('error', () => { resolve({ status: 0, body: undefined }) })
    })
    req.on('timeout', () => { req.destroy(new Error('timeout')) })
    req.on('error', () => { resolve({ status: 0, body: undefined }) })
    req.end()
  })
}

/**
 * Where load goes: the gateway's `url` and the service's `path`; `label` names a replica's provider
 * from its lease id prefix.
 */
interface LoadTarget {
  url: string
  path: string
  label: (replicaPrefix: string) => string
}

/**
 * Requests through the gateway, CONCURRENCY at a time, until `n` are done or `stop()`; counted per
 * provider that answered.
 */
async function load (
  { url, path, label }: LoadTarget,
  n: number,
  stop: () => boolean = () => false
): Promise<LoadReport> {
  const report: LoadReport = { requests: 0, failed: 0, byProvider: {} }
  let next = 0
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < n && !stop()) {
      const text = TEXTS[next++ % TEXTS.length] as string
      const answer = await getJson(`${url}${path}?text=${encodeURIComponent(text)}`)
      report.requests++
      if (answer.status !== 200 || typeof answer.body?.sentiment !== 'number') {
        report.failed++
        if ((report.failures ??= []).length < 5) report.failures.push(`${answer.status} ${JSON.stringify(answer.body ?? null).slice(0, 200)}`)
        continue
      }
      // the node service names its replica by the lease id's first 8 hex digits, its busybox twin by all of it
      const who = label(String(answer.body.replica).slice(0, 8))
      report.byProvider[who] = (report.byProvider[who] ?? 0) + 1
    }
  }))
  return report
}

function shares (r: LoadReport): string {
  const said = Object.entries(r.byProvider).map(([who, n]) => `${who} ${n}`).join(', ')
  return r.failures != null ? `${said} (failed: ${r.failures.join('; ')})` : said
}

/** Kills the replica's container (docker runner): its service, PID 1's child, dies with it. */
async function killContainer (leaseId: string): Promise<string | undefined> {
  return await new Promise(resolve => {
    execFile('docker', ['ps', '-q', '--filter', `label=idlegrid.job=${leaseId}`], { timeout: 20_000 }, (err, stdout) => {
      const id = String(stdout).trim().split('\n')[0] ?? ''
      if (err != null || id === '') { resolve(undefined); return }
      execFile('docker', ['kill', '--signal', 'KILL', id], { timeout: 20_000 }, (killErr) => { resolve(killErr == null ? id : undefined) })
    })
  })
}

export async function playServicesAct (network: LocalNetwork, label: (peerId: string) => string, out: DemoOutput, runner: DemoRunner = { kind: 'process' }): Promise<ServicesActReport> {
  const renterDir = network.renters[0].dataDir
  const control = async (method: string, params: Record<string, unknown> = {}, timeoutMs = 30_000): Promise<any> =>
    await callControl(renterDir, method, params, { timeoutMs })
  const status = async (): Promise<{ url: string, ready: number, replicas: Replica[] }> => await control('services.status', { name: 'sentiment' })
  const docker = runner.kind === 'docker'
  const file = docker ? 'sentiment-sh.yaml' : 'sentiment.yaml'
  const path = docker ? '/cgi-bin/sentiment.sh' : '/sentiment'
  const raw = await readJobFile(`${SERVICES_DIR}${file}`)
  if (runner.kind === 'docker') raw.runtime = { ...(raw.runtime as Record<string, unknown>), image: runner.image }
  // one replica per residency zone, so a replacement may come from another provider of the zone
  const spec = {
    ...raw,
    replicas: { eu: 1, us: 1 },
    lease: { untilStopped: true, minMinutes: 5 },
    auction: { bidWindowMs: 700 }
  }
  out.info('\n— services act: always-on inference —')
  out.info(docker
    ? `deploying examples/services/${file} (a word-list sentiment CGI under busybox httpd, in containers of ${runner.image}) as two leases: one in the EU, one in the US`
    : `deploying examples/services/${file} (wink-nlp sentiment, real inference) as two leases: one in the EU, one in the US`)
  const deployed = await control('services.deploy', { spec, baseDir: SERVICES_DIR, waitMs: 90_000 }, 120_000) as { url: string, ready: number, replicas: Replica[] }
  const byPrefix = new Map<string, string>()
  const remember = (replicas: Replica[]): void => {
    for (const r of replicas) byPrefix.set(r.id.slice(0, 8), label(r.provider))
  }
  remember(deployed.replicas)
  const who = (prefix: string): string => byPrefix.get(prefix) ?? prefix
  const target: LoadTarget = { url: deployed.url, path, label: who }
  const report: ServicesActReport = {
    ok: false,
    deployed: deployed.replicas.map(r => ({ region: r.region, provider: label(r.provider) })),
    burst: { requests: 0, failed: 0, byProvider: {} }
  }
  try {
    for (const r of deployed.replicas) out.info(`  replica ${r.id.slice(0, 8)} in ${r.region.toUpperCase()} on ${label(r.provider)}: ${r.state}`)
    if (deployed.ready < 2) { report.detail = `only ${deployed.ready} of 2 replicas ready`; out.info(`  ${report.detail}`); return report }
    out.info(`  gateway ${deployed.url} (HTTP on 127.0.0.1; each request goes over libp2p to the replica the router picks)`)

    report.burst = await load(target, 200)
    out.info(`burst: ${report.burst.requests} requests, ${report.burst.failed} failed; answered by ${shares(report.burst)}`)

    // kill the EU replica's service process (or container): its run ends, the lease with it, a new auction runs
    const victim = deployed.replicas.find(r => r.region === 'eu') as Replica
    let pid = 0
    if (!docker) {
      const host = network.providers.find(p => p.peerId === victim.provider)
      const hosted = host == null ? undefined : (await callControl(host.dataDir, 'services.hosted', {}, { timeoutMs: 10_000 }) as { leases: Array<{ leaseId: string, port: number }> }).leases.find(l => l.leaseId === victim.id)
      const health = hosted == null ? undefined : await getJson(`http://127.0.0.1:${hosted.port}/health`)
      pid = Number(health?.body?.pid)
      if (!Number.isInteger(pid) || pid <= 1) { report.detail = 'could not find the EU replica\'s process'; out.info(`  ${report.detail}`); return report }
    }
    let stop = false
    const meanwhile = load(target, Number.MAX_SAFE_INTEGER, () => stop)
    const killedAt = Date.now()
    if (docker) {
      const container = await killContainer(victim.id)
      if (container == null) { stop = true; await meanwhile; report.detail = 'could not find the EU replica\'s container'; out.info(`  ${report.detail}`); return report }
      report.killed = { region: victim.region, provider: label(victim.provider), container: container.slice(0, 12) }
      out.info(`killed the EU replica ${victim.id.slice(0, 8)} on ${label(victim.provider)} (docker kill of its container ${container.slice(0, 12)}) with requests still coming`)
    } else {
      process.kill(pid, 'SIGKILL')
      report.killed = { region: victim.region, provider: label(victim.provider), pid }
      out.info(`killed the EU replica ${victim.id.slice(0, 8)} on ${label(victim.provider)} (SIGKILL to its service, pid ${pid}) with requests still coming`)
    }
    let replacement: Replica | undefined
    try {
      await waitUntil(async () => {
        const s = await status()
        remember(s.replicas)
        replacement = s.replicas.find(r => r.region === 'eu' && r.id !== victim.id && r.state === 'ready')
        return replacement != null
      }, { timeoutMs: 90_000, intervalMs: 250, what: 'the replacement replica' })
    } finally {
      stop = true
      report.meanwhile = await meanwhile
    }
    const arrived = replacement as Replica
    report.replacement = { provider: label(arrived.provider), readyAfterMs: Date.now() - killedAt }
    out.info(`meanwhile: ${report.meanwhile.requests} requests, ${report.meanwhile.failed} failed; answered by ${shares(report.meanwhile)}`)
    out.info(`replacement ${arrived.id.slice(0, 8)} on ${report.replacement.provider} ready ${(report.replacement.readyAfterMs / 1000).toFixed(1)} s after the kill (a new auction in the EU${arrived.provider === victim.provider ? '' : ', another provider'})`)

    report.after = await load(target, 200)
    out.info(`after: ${report.after.requests} requests, ${report.after.failed} failed; answered by ${shares(report.after)}`)
    report.ok =
      report.burst.failed === 0 &&
      report.meanwhile.failed === 0 &&
      report.after.failed === 0 &&
      report.after.byProvider[report.replacement.provider] != null
    return report
  } finally {
    await control('services.stop', { name: 'sentiment' }).catch(() => {})
    out.info(`services act ${report.ok ? 'done' : 'FAILED'}: the service is stopped`)
  }
}
