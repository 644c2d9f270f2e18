/**
 * Issue 18 items 1 and 2 end to end: a real job on a small in-process network, then the
 * renter's and provider's /metrics scraped and checked against their control methods' JSON,
 * and their dashboards opened in headless Chromium (Debian's package, driven by
 * playwright-core) and what the pages show checked against the same JSON.
 */
import * as assert from 'node:assert/strict'
import { access, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { recordAttack, waitFor } from '../utils/index.js'
import { HOSTILE_LOG_LINE, parseMetrics, startCockpitNetwork, type CockpitNetwork } from './fixtures.js'
import { loadDashboardToken } from '../../src/observe/index.js'
import type { IdlegridNode } from '../../src/node/index.js'
import type { JobSummary } from '../../src/submit/summary.js'
import { jobShardOf } from '../../protocols/ids.js'

const CHROMIUM = process.env.IDLEGRID_CHROMIUM ?? '/usr/bin/chromium'

/** A service small enough to deploy in a second: node answers "ok" on $PORT (health: /). */
const TINY_SERVICE = {
  name: 'cockpit-ok',
  runtime: { command: ['node', '-e', "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1')"] },
  health: '/',
  replicas: 1,
  lease: { untilStopped: true, minMinutes: 1 },
  auction: { bidWindowMs: 400 }
}

/** GET /api/PAGE of `node`'s dashboard with its token (from the data dir) as a bearer header, as a script would. */
async function dashboardApi (dashboardUrl: string | undefined, node: IdlegridNode, page: string): Promise<any> {
  assert.ok(dashboardUrl != null, 'the dashboard is served')
  const url = new URL(dashboardUrl)
  const res = await fetch(`${url.origin}/api/${page}`, { headers: { authorization: `Bearer ${await loadDashboardToken(node.config.dataDir)}` } })
  assert.equal(res.status, 200)
  return await res.json()
}

async function scrape (url: string | undefined): Promise<Map<string, number>> {
  assert.ok(url != null, 'metrics are served')
  const res = await fetch(url)
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/)
  return parseMetrics(await res.text())
}

describe('observe: metrics and dashboard after a real job (issue 18 items 1, 2)', function () {
  this.timeout(120_000)
  let c: CockpitNetwork
  let summary: JobSummary
  let deployed: Promise<void> | undefined
  /**
   * The tiny service deployed once (by whichever services test runs first) and asked one request
   * through its gateway.
   */
  const deployTiny = async (): Promise<void> => {
    deployed ??= (async () => {
      const status = await c.control(c.renter, 'services.deploy', { spec: TINY_SERVICE, baseDir: c.dir, waitMs: 30_000 })
      assert.equal(status.ready, 1, `the replica is ready: ${JSON.stringify(status.replicas)}`)
      assert.equal((await (await fetch(`${String(status.url)}/`)).text()), 'ok')
    })()
    await deployed
  }

  before(async () => {
    c = await startCockpitNetwork()
    summary = await c.runJob('cockpit-job')
    assert.equal(summary.status, 'ok', JSON.stringify(summary.history))
  })

  after(async () => {
    if (c != null) await c.control(c.renter, 'services.stop', { name: TINY_SERVICE.name }).catch(() => {})
    await c?.stop()
  })

  it("the renter's /metrics count its auction, job, bytes and clearing price, beside libp2p's own", async () => {
    const m = await scrape(c.renterView.metricsUrl)
    assert.equal(m.get('idlegrid_auctions_total{outcome="award"}'), 1)
    assert.equal(m.get('idlegrid_jobs_total{side="renter",outcome="ok"}'), 1)
    assert.equal(m.get('idlegrid_job_duration_seconds_count{side="renter"}'), 1)
    const job = c.renterView.observer.jobs().find(j => j.jobId === summary.jobId)
    assert.ok(job != null && job.sentBytes > 0)
    assert.equal(m.get('idlegrid_job_bytes_total{direction="sent"}'), job.sentBytes, 'input bytes as the job events reported them')
    assert.equal(m.get('idlegrid_job_bytes_total{direction="received"}'), job.receivedBytes)
    const report = c.renterView.observer.recentAuctions()[0]
    assert.ok(report?.award != null)
    assert.equal(m.get('idlegrid_clearing_price_usd_sum{side="renter"}'), report.award.price)
    assert.equal(m.get('idlegrid_clearing_price_usd_count{side="renter"}'), 1)
    assert.ok((m.get('idlegrid_peers_connected') ?? 0) >= 1)
    assert.ok([...m.keys()].some(k => k.startsWith('libp2p_')), 'libp2p\'s metrics are there')
    const ledger = await c.control(c.renter, 'ledger.status')
    assert.ok((m.get('idlegrid_ledger_entries') ?? -1) <= ledger.entries && (m.get('idlegrid_ledger_entries') ?? 0) >= 1, 'ledger entries as ledger.status says')
  })

  it("the provider's /metrics agree with market.stats and exec.jobs", async () => {
    const stats = await c.control(c.provider, 'market.stats')
    const m = await scrape(c.providerView.metricsUrl)
    assert.equal(m.get('idlegrid_market_bids_total'), stats.bids)
    assert.equal(m.get('idlegrid_market_wins_total'), stats.wins)
    assert.equal(stats.wins, 1)
    assert.equal(m.get('idlegrid_market_fill_ratio'), stats.fillRate)
    assert.equal(m.get('idlegrid_jobs_total{side="provider",outcome="completed"}'), 1)
    assert.equal(m.get('idlegrid_job_duration_seconds_count{side="provider"}'), 1)
    assert.ok((m.get('idlegrid_expected_earnings_usd') ?? 0) > 0)
    assert.equal(m.get('idlegrid_clearing_price_usd_count{side="provider"}'), 1, 'the award it saw')
    // market version 2: the job (no residency, no VRAM floor) travels on its one shard
    const shard = jobShardOf(undefined)
    assert.ok((m.get(`idlegrid_gossip_messages_total{topic="${shard}",verdict="accept",reason=""}`) ?? 0) >= 1, `the job accepted on ${shard}`)
  })

  it("the dashboard's services API gives a deployment as services.status has it, and the provider's hosted lease", async () => {
    await deployTiny()
    const now = await c.control(c.renter, 'services.status', { name: TINY_SERVICE.name })
    const renterApi = await dashboardApi(c.renterView.dashboardUrl, c.renter, 'services')
    assert.equal(renterApi.deployments.length, 1)
    const { events, ...deployment } = renterApi.deployments[0]
    const { events: allEvents, ...expected } = now
    assert.deepEqual(deployment, expected, 'the deployment as services.status has it')
    assert.deepEqual(events, allEvents.slice(-5), 'its last events')
    assert.equal(deployment.gateway.answered, 1)
    assert.equal(renterApi.hosted, null, 'a renter hosts no lease')
    const providerApi = await dashboardApi(c.providerView.dashboardUrl, c.provider, 'services')
    assert.equal(providerApi.deployments, null, 'a provider deploys nothing')
    assert.deepEqual(providerApi.hosted, (await c.control(c.provider, 'services.hosted')).leases)
    assert.equal(providerApi.hosted[0].leaseId, now.replicas[0].id)
    assert.equal(providerApi.hosted[0].healthy, true)
  })

  describe('in headless Chromium', function () {
    let browser: Browser | undefined
    let page: Page

    before(async function () {
      try {
        await access(CHROMIUM)
      } catch {
        console.log(`      (skipped: no Chromium at ${CHROMIUM}; install Debian's chromium package, as .ci/run does)`)
        this.skip()
      }
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] })
      page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
      // every request the page makes stays on the node's own origin: no CDN
      page.on('request', (req) => { if (!req.url().startsWith('http://127.0.0.1:')) assert.fail(`the page fetched ${req.url()}`) })
    })

    after(async () => { await browser?.close() })

    /**
     * Opens page `name` of the dashboard at `url`, signing in on its page first (the token from the
     * node's data dir, typed as a user would).
     */
    const open = async (url: string | undefined, name: string): Promise<void> => {
      assert.ok(url != null)
      const origin = new URL(url).origin
      if (!page.url().startsWith(origin)) {
        await page.goto(url)
        const node = url === c.renterView.dashboardUrl ? c.renter : c.provider
        await page.getByTestId('token').fill(await loadDashboardToken(node.config.dataDir))
        await page.getByTestId('sign-in-button').click()
        await page.waitForSelector('body[data-loaded]', { timeout: 20_000 })
        assert.ok(!page.url().includes('token'), 'the token never enters the address bar')
      }
      await page.goto(`${origin}/#${name}`)
      await page.waitForSelector(`body[data-loaded="${name}"]`, { timeout: 20_000 })
    }
    const text = async (testid: string): Promise<string> => (await page.getByTestId(testid).first().textContent()) ?? ''

    it('the network page lists the peers the node connects to and hears', async () => {
      await open(c.renterView.dashboardUrl, 'network')
      const status = await c.control(c.renter, 'status')
      assert.equal(await text('peer-count'), String(status.peers.length))
      const heard = await page.getByTestId('heard').locator('code').evaluateAll(els => els.map(e => e.getAttribute('data-peer')))
      for (const p of status.heard) assert.ok(heard.includes(p.peerId), `heard ${String(p.peerId)} listed`)
      assert.ok(heard.includes(c.provider.peerId.toString()))
    })

    it('the market page shows the auction, its bids and why the winner won, and draws the price chart', async () => {
      await open(c.renterView.dashboardUrl, 'market')
      const report = c.renterView.observer.recentAuctions()[0]
      assert.ok(report?.award != null)
      const card = page.locator(`[data-testid="auction"][data-job="${report.jobId}"]`)
      assert.equal(await card.getByTestId('why').textContent(), `why: ${report.award.reason}`)
      assert.match((await card.getByTestId('auction-outcome').textContent()) ?? '', new RegExp(`awarded to .*${c.provider.peerId.toString().slice(-8)} at ${report.award.price.toFixed(2)}`))
      assert.equal(await card.getByTestId('bids').locator('tbody tr').count(), report.bids.length)
      const drawn = await page.evaluate('document.getElementById("price-chart").width') as number
      assert.ok(drawn > 0, 'the chart drew')
      // providers by GPU and region, as DHT discovery finds them
      const found = await c.control(c.renter, 'capability.discover', { filters: {}, timeoutMs: 5_000 })
      const provider = found.providers.find((p: { peerId: string }) => p.peerId === c.provider.peerId.toString())
      assert.ok(provider != null)
      await page.reload()
      await page.waitForSelector('body[data-loaded="market"]')
      await waitFor(async () => (await text('by-gpu')).includes(`${String(provider.gpus[0].model)}${String(provider.gpus[0].count)}`), { timeoutMs: 20_000, what: 'the provider\'s GPU on the market page' })
      assert.match(await text('by-region'), new RegExp(`${String(provider.region)}1`))
    })

    it('the jobs page shows the job, its log, attestation and receipt', async () => {
      await open(c.renterView.dashboardUrl, 'jobs')
      const card = page.locator(`[data-testid="renter-job"][data-job="${summary.jobId}"]`)
      assert.equal(await card.getByTestId('job-status').textContent(), summary.status)
      assert.match((await card.getByTestId('job-log').textContent()) ?? '', /job says done/)
      assert.ok(summary.attestation != null && summary.receipt != null)
      assert.equal(await card.getByTestId('job-attestation').textContent(), `attestation ${summary.attestation.status}, outputs ${summary.attestation.outputDigest.slice(0, 16)}…, verified`)
      assert.equal(await card.getByTestId('job-receipt').textContent(), `receipt ${summary.receipt.outcome}`)
      const dir = join(c.dir, 'shots')
      await mkdir(dir, { recursive: true })
      await page.screenshot({ path: join(dir, 'jobs.png'), fullPage: true })
    })

    it('red team: markup in a provider-sent log line is shown as text, never run or made into elements', async () => {
      await open(c.renterView.dashboardUrl, 'jobs')
      const log = (await page.locator(`[data-testid="renter-job"][data-job="${summary.jobId}"]`).getByTestId('job-log').textContent()) ?? ''
      const injected = await page.locator('#pwned, #pwned-b').count()
      const ran = await page.evaluate('document.body.dataset.pwned === "1"') as boolean
      recordAttack({ issue: '18.2', attack: 'HTML with an onerror script in a job log line, shown on the renter\'s dashboard', got: `${injected} elements injected, script ran: ${String(ran)}`, limit: 'the page puts peer text in with textContent; CSP script-src \'self\'' })
      assert.ok(log.includes(HOSTILE_LOG_LINE), 'the line is shown as it was sent')
      assert.equal(injected, 0)
      assert.equal(ran, false)
    })

    it("the provider's earnings page shows its fill rate and earnings as market.stats has them, its jobs page the run", async () => {
      await open(c.providerView.dashboardUrl, 'earnings')
      const stats = await c.control(c.provider, 'market.stats')
      assert.equal(await text('wins'), String(stats.wins))
      assert.equal(await text('bids'), String(stats.bids))
      assert.equal(await text('fill-rate'), stats.fillRate.toFixed(2))
      assert.equal(await text('expected-earnings'), stats.expectedEarningsUsd.toFixed(4))
      // and the run on its jobs page, as exec.jobs has it
      await open(c.providerView.dashboardUrl, 'jobs')
      const run = (await c.control(c.provider, 'exec.jobs')).jobs.find((j: { jobId: string }) => j.jobId === summary.jobId)
      assert.ok(run != null)
      const cells = await page.getByTestId('provider-jobs').locator('tbody tr', { hasText: summary.jobId.slice(0, 12) }).locator('td').allTextContents()
      assert.deepEqual(cells.slice(0, 1).concat(cells.slice(2, 5)), [
        summary.jobId.slice(0, 12),
        run.tier,
        run.state,
        run.status
      ])
    })

    it('the reputation page shows the provider and its evidence', async () => {
      const rep = await waitFor(async () => {
        const list = await c.control(c.renter, 'reputation') as Array<{ peerId: string, jobs: number, score: number }>
        return list.find(r => r.peerId === c.provider.peerId.toString() && r.jobs > 0)
      }, { timeoutMs: 30_000, what: 'the job in the renter\'s reputation view' })
      await open(c.renterView.dashboardUrl, 'reputation')
      const line = page.locator(`[data-testid="reputation"] tr[data-peer="${rep.peerId}"]`)
      await line.waitFor({ timeout: 10_000 })
      assert.match((await line.textContent()) ?? '', new RegExp(rep.score.toFixed(3).replace('.', '\\.')))
      await line.click()
      await page.waitForFunction(`document.querySelector('[data-testid="explain-peer"]')?.textContent === ${JSON.stringify(rep.peerId)}`)
      assert.equal(await page.getByTestId('evidence').locator('tr').count(), 3, 'direct, transitive, discounted')
      const shot = join(c.dir, 'shots', 'reputation.png')
      await page.screenshot({ path: shot, fullPage: true })
      // the README's picture: written into docs/ only when asked (IDLEGRID_DOCS_SCREENSHOT=1)
      if (process.env.IDLEGRID_DOCS_SCREENSHOT === '1') {
        await open(c.renterView.dashboardUrl, 'market')
        await mkdir('docs', { recursive: true })
        await page.screenshot({ path: 'docs/dashboard.png', fullPage: true })
      }
    })

    it('the services page shows a deployment, its replica and gateway figures as services.status has them, and the provider its hosted lease', async () => {
      await deployTiny()
      const now = await c.control(c.renter, 'services.status', { name: TINY_SERVICE.name })
      await open(c.renterView.dashboardUrl, 'services')
      const card = page.locator(`[data-testid="deployment"][data-service="${TINY_SERVICE.name}"]`)
      await waitFor(async () => (await card.getByTestId('gateway-figures').textContent())?.startsWith('requests 1,'), { timeoutMs: 10_000, what: 'the gateway figures after one request' })
      assert.equal(await card.getByTestId('service-ready').textContent(), `${String(now.ready)}/${String(now.size)} ready`)
      assert.equal(await card.getByTestId('gateway-url').textContent(), now.url)
      assert.equal(await card.getByTestId('gateway-figures').textContent(), `requests ${String(now.gateway.requests)}, answered ${String(now.gateway.answered)}, retried ${String(now.gateway.retried)}`)
      const replica = now.replicas[0]
      const cells = await card.locator(`tr[data-replica="${String(replica.id)}"] td`).allTextContents()
      assert.deepEqual(cells.slice(0, 4), [replica.id.slice(0, 8), `…${String(replica.provider).slice(-8)}`, replica.region === '' ? 'any' : replica.region, 'ready'])
      assert.equal(replica.provider, c.provider.peerId.toString())
      assert.equal(cells[6], String(replica.served))
      // the provider's page: the lease it hosts, healthy, with the request it passed on
      const hosted = (await c.control(c.provider, 'services.hosted')).leases.find((l: { leaseId: string }) => l.leaseId === replica.id)
      assert.ok(hosted != null, 'the provider hosts the replica\'s lease')
      await open(c.providerView.dashboardUrl, 'services')
      const lease = await page.locator(`[data-testid="hosted"] tr[data-lease="${String(hosted.leaseId)}"] td`).allTextContents()
      assert.deepEqual(lease.slice(0, 3), [hosted.leaseId.slice(0, 8), `…${c.renter.peerId.toString().slice(-8)}`, 'healthy'])
      assert.ok(Number(lease[4]) >= 1, 'the request it passed on')
      assert.match(await page.getByTestId('deployments').textContent() ?? '', /does not deploy services/)
      await page.screenshot({ path: join(c.dir, 'shots', 'services.png'), fullPage: true })
    })
  })
})
