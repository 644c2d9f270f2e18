/**
 * Issue 38 item 1 end to end, in separate processes on the CI's real Docker engine: three
 * providers with the docker runner (busybox image, simulated GPUs), a renter deploying the
 * sentiment service's busybox twin (examples/services/sentiment-sh.yaml) as two leases, each in
 * its container on a network of its own. The gateway answers every request; one replica's
 * provider is SIGKILLed mid-load: no idempotent request is lost and the deployment is back at
 * size within the bound, as under the process runner (deploy.e2e.spec.ts).
 */
import * as assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { resolve } from 'node:path'
import { dockerClientEnv } from '../../src/exec/runners/docker-client.js'
import { sweepOwner } from '../../src/exec/runners/service-network.js'
import { defaultWorkRoot } from '../../src/exec/runners/work-dirs.js'
import { recordAttack, tempDir, waitFor } from '../utils/index.js'
import { engineMissing, TEST_IMAGE } from '../exec/runners/docker-engine.js'
import { control, sentimentLoad, SERVICES_DIR, startServeNetwork } from './fixtures.js'
import type { LocalNetwork } from '../utils/index.js'

const RECOVERY_BOUND_MS = 45_000
const DEPLOY_WAIT_MS = 90_000
const CONCURRENCY = 6
const PATH = '/cgi-bin/sentiment.sh'
/** sentiment-sh.yaml's fields, sized for a test. */
function serviceSpec (): Record<string, unknown> {
  return {
    name: 'sentiment',
    tier: 'silver',
    runtime: { image: TEST_IMAGE, command: ['sh', '-c', 'exec httpd -f -p "$PORT" -h /job/inputs/www -c /job/inputs/httpd.conf'] },
    files: { www: 'sentiment-sh/www', 'httpd.conf': 'sentiment-sh/httpd.conf' },
    health: '/health',
    replicas: 2,
    lease: { untilStopped: true, minMinutes: 1 },
    limits: { timeoutSeconds: 10, maxBodyKiB: 64 },
    auction: { bidWindowMs: 400 }
  }
}

describe('serve: a service under the docker runner, kept at size through a provider\'s SIGKILL (issue 38, separate processes, real engine)', function () {
  this.timeout(240_000)
  let net: LocalNetwork | undefined
  let dir: { path: string, cleanup: () => Promise<void> } | undefined

  before(async function () {
    const why = engineMissing()
    if (why != null) {
      console.log(`      (skipped: ${why})`)
      this.skip()
    }
    this.timeout(60_000 + DEPLOY_WAIT_MS + 60_000)
    dir = await tempDir('idlegrid-serve-docker-')
    net = await startServeNetwork(dir.path, 3, ['eu-west', 'us-east'], ['--runner', 'docker', '--images', TEST_IMAGE, '--docker-pull', 'never'])
  })

  after(async () => {
    if (net != null) await control(net.renters[0]!.dataDir, 'services.stop', { name: 'sentiment' }).catch(() => {})
    await net?.stop()
    // the SIGKILLed provider could not remove its replica's container and network: swept by its
    // owner label only (another spec file may run containers on the same engine meanwhile)
    for (const p of net?.providers ?? []) {
      const owner = createHash('sha256').update(resolve(defaultWorkRoot(p.dataDir))).digest('hex').slice(0, 16)
      await sweepOwner({ docker: 'docker', env: dockerClientEnv() }, owner)
    }
    await dir?.cleanup()
  })

  it('deploys two replicas in containers, answers through the gateway, and replaces the one whose provider is SIGKILLed', async () => {
    const network = net as LocalNetwork
    const renterDir = network.renters[0]!.dataDir
    const deployed = await control(renterDir, 'services.deploy', { spec: serviceSpec(), baseDir: SERVICES_DIR, waitMs: DEPLOY_WAIT_MS }, DEPLOY_WAIT_MS + 30_000)
    if (deployed.ready !== 2) {
      const events = (await control(renterDir, 'services.status', { name: 'sentiment' })).events
      assert.fail(`both replicas ready: ${JSON.stringify(deployed.replicas)}; events ${JSON.stringify(events).slice(0, 2000)}`)
    }
    // each replica is a container of the busybox image, each lease on a network of its own
    const leaseNetworks = execFileSync('docker', ['network', 'ls', '--format', '{{.Name}}', '--filter', 'label=idlegrid.lease'], { encoding: 'utf8' }).split('\n').filter(l => l !== '')
    assert.ok(leaseNetworks.length >= 2, `a network per lease (${leaseNetworks.join(', ')})`)
    const load = async (n: number, onAnswer?: (done: number) => void): ReturnType<typeof sentimentLoad> =>
      await sentimentLoad(deployed.url, n, { path: PATH, concurrency: CONCURRENCY, post: i => i % 5 === 4, onAnswer })
    const first = await load(30)
    assert.deepEqual(first.failed, [], 'every request answered right')

    const before = await control(renterDir, 'services.status', { name: 'sentiment' })
    const victimId = before.replicas[0].provider as string
    const victim = network.providers.find(p => p.peerId === victimId)
    assert.ok(victim != null, 'the replica runs on one of our providers')
    let killedAt = 0
    const result = await load(80, done => {
      if (done === 20 && killedAt === 0) { killedAt = Date.now(); victim.child.kill('SIGKILL') }
    })
    assert.ok(killedAt > 0)
    const lostGets = result.failed.filter(f => !f.post)
    const lostPosts = result.failed.filter(f => f.post)
    assert.deepEqual(lostGets, [], 'no idempotent request lost')
    assert.ok(lostPosts.length <= CONCURRENCY, `at most the in-flight POSTs lost (${lostPosts.length})`)
    const back = await waitFor(async () => {
      const s = await control(renterDir, 'services.status', { name: 'sentiment' })
      return s.ready === 2 && s.replicas.every((r: any) => r.provider !== victimId) ? s : undefined
    }, { timeoutMs: RECOVERY_BOUND_MS, intervalMs: 250, what: 'the deployment back at two ready replicas' })
    const recoveryMs = Date.now() - killedAt
    assert.ok(back.events.some((e: any) => e.type === 'replica-ended' && e.provider === victimId), 'the lost replica is in the events')
    recordAttack({ issue: '38.1', attack: 'SIGKILL a docker replica\'s provider mid-load (GETs lost / POSTs lost / ms back at size)', got: `${lostGets.length} / ${lostPosts.length} / ${recoveryMs}`, limit: `0 / ≤ ${CONCURRENCY} / ${RECOVERY_BOUND_MS}` })
    const after = await load(20)
    assert.deepEqual(after.failed, [], 'the replacement serves')
  })
})
