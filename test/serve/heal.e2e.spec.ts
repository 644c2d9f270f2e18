/**
 * Issue 38 item 5, in separate processes: a replica whose provider freezes (SIGSTOP: its
 * connections stay open, nothing answers, as a machine that hangs or drops off the network) is
 * given up by the gateway's health probes and replaced within 30 s of the freeze, with no
 * idempotent request lost. Before, only the job stream's own timeouts noticed (~95 s).
 */
import * as assert from 'node:assert/strict'
import { recordAttack, tempDir, waitFor } from '../utils/index.js'
import { control, sentimentLoad, sentimentSpec, SERVICES_DIR, startServeNetwork } from './fixtures.js'
import type { LocalNetwork, NodeProcess } from '../utils/index.js'

const HEAL_BOUND_MS = 30_000
const DEPLOY_WAIT_MS = 60_000
const CONCURRENCY = 8

describe('serve: a replica whose provider freezes is replaced within 30 s (issue 38, separate processes)', function () {
  this.timeout(180_000)
  let net: LocalNetwork | undefined
  let dir: { path: string, cleanup: () => Promise<void> } | undefined
  let frozen: NodeProcess | undefined

  before(async function () {
    this.timeout(60_000 + DEPLOY_WAIT_MS + 30_000)
    dir = await tempDir('idlegrid-heal-')
    net = await startServeNetwork(dir.path, 3)
  })

  after(async () => {
    frozen?.child.kill('SIGCONT')
    if (net != null) await control(net.renters[0]!.dataDir, 'services.stop', { name: 'sentiment' }).catch(() => {})
    await net?.stop()
    await dir?.cleanup()
  })

  it('SIGSTOP of a replica\'s provider: given up by the probes, replaced within the bound, no GET lost', async () => {
    const network = net as LocalNetwork
    const renterDir = network.renters[0]!.dataDir
    const deployed = await control(renterDir, 'services.deploy', { spec: sentimentSpec(), baseDir: SERVICES_DIR, waitMs: DEPLOY_WAIT_MS }, DEPLOY_WAIT_MS + 30_000)
    assert.equal(deployed.ready, 2, `both replicas ready: ${JSON.stringify(deployed.replicas)}`)
    const victimId = deployed.replicas[0].provider as string
    frozen = network.providers.find(p => p.peerId === victimId)
    assert.ok(frozen != null, 'the replica runs on one of our providers')
    const victim = frozen
    let frozenAt = 0
    let healedAt = 0
    let stop = false
    const watching = (async () => {
      await waitFor(() => frozenAt > 0, { timeoutMs: 60_000, what: 'the freeze' })
      const back = await waitFor(async () => {
        const s = await control(renterDir, 'services.status', { name: 'sentiment' })
        return s.ready === 2 && s.replicas.every((r: any) => r.provider !== victimId) ? s : undefined
      }, { timeoutMs: HEAL_BOUND_MS + 30_000, intervalMs: 250, what: 'the deployment back at two ready replicas, away from the frozen provider' })
      healedAt = Date.now()
      stop = true
      return back
    })()
    const result = await sentimentLoad(deployed.url, 1_000_000, {
      concurrency: CONCURRENCY,
      post: i => i % 5 === 4,
      stop: () => stop,
      onAnswer: done => { if (done === 30 && frozenAt === 0) { frozenAt = Date.now(); victim.child.kill('SIGSTOP') } }
    })
    const back = await watching
    const healMs = healedAt - frozenAt
    const lostGets = result.failed.filter(f => !f.post)
    const lostPosts = result.failed.filter(f => f.post)
    const silent = back.events.find((e: any) => e.type === 'replica-silent' && e.provider === victimId)
    recordAttack({ issue: '38.5', attack: 'a replica\'s provider freezes (SIGSTOP) mid-load (GETs lost / POSTs lost / ms until two ready replicas again)', got: `${lostGets.length} / ${lostPosts.length} / ${healMs}`, limit: `0 / ≤ ${CONCURRENCY} / ${HEAL_BOUND_MS}` })
    assert.ok(silent != null, `the probes gave the silent replica up (events: ${JSON.stringify(back.events.slice(-8))})`)
    assert.ok(healMs <= HEAL_BOUND_MS, `back at size ${healMs} ms after the freeze (bound ${HEAL_BOUND_MS})`)
    assert.deepEqual(lostGets, [], 'no idempotent request lost')
    assert.ok(lostPosts.length <= CONCURRENCY, `at most the in-flight POSTs lost (${lostPosts.length})`)
    console.log(`      frozen → two ready replicas again in ${healMs} ms; ${result.ok} answered, ${lostPosts.length} POSTs lost`)
  })
})
