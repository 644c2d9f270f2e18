/* idlegrid dashboard: fetches /api/<page> (same origin, token cookie) every few seconds and
 * draws it. Everything a peer sent is put in the page as text (textContent), never as HTML. */
/* global Chart, Node, location */
/* eslint no-void: ['error', { allowAsStatement: true }] */
'use strict'

const PAGES = ['network', 'market', 'jobs', 'services', 'earnings', 'reputation']
const REFRESH_MS = 3000
const charts = {}
let explainPeer = null

function el (tag, attrs, ...children) {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (k === 'class') e.className = v
    else if (k.startsWith('data-')) e.setAttribute(k, v)
    else if (k === 'onclick') e.addEventListener('click', v)
    else e.setAttribute(k, v)
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c == null ? '' : String(c)))
  return e
}

function short (id) { return typeof id === 'string' && id.length > 16 ? '…' + id.slice(-8) : String(id ?? '') }
function num (x, digits = 2) { return typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '' }
function ago (t) { return typeof t === 'number' ? `${Math.max(0, Math.round((Date.now() - t) / 1000))} s ago` : '' }
function bytes (n) { return n >= 1048576 ? `${(n / 1048576).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B` }

function fill (selector, rows) {
  const body = document.querySelector(`[data-testid="${selector}"] tbody`)
  body.replaceChildren(...rows)
}
function row (cells, attrs) { return el('tr', attrs, ...cells.map(c => c instanceof Node ? el('td', {}, c) : el('td', typeof c === 'number' ? { class: 'num' } : {}, c))) }
function setText (testid, text) { document.querySelector(`[data-testid="${testid}"]`).textContent = String(text ?? '') }

async function api (page, params = '') {
  const res = await fetch(`/api/${page}${params}`, { credentials: 'same-origin' })
  if (!res.ok) throw new Error(`${page}: HTTP ${res.status}`)
  return await res.json()
}

const draw = {
  async network () {
    const n = await api('network')
    setText('peer-count', n.peers.length)
    setText('routing-table', n.routingTable)
    setText('dht-mode', n.dhtMode)
    fill('heard', n.heard.map(p => row([el('code', { title: p.peerId, 'data-peer': p.peerId }, short(p.peerId)), p.role, p.region ?? '', p.slotsTotal > 0 ? `${p.slotsBusy}/${p.slotsTotal}` : '', ago(p.lastSeen)])))
    fill('regions', Object.entries(n.regions).map(([r, c]) => row([r, c])))
    fill('topics', Object.entries(n.topics).map(([t, peers]) => row([t, peers.length, Object.entries(n.gossip[t] ?? {}).map(([k, v]) => `${k} ${v}`).join(', ')])))
  },

  async market () {
    const m = await api('market')
    fill('by-gpu', Object.entries(m.byGpu).map(([g, c]) => row([g, c])))
    fill('by-region', Object.entries(m.byRegion).map(([r, c]) => row([r, c])))
    line('price-chart', [
      { label: 'my awards', data: m.prices.filter(p => p.side === 'renter').map(p => ({ x: p.at, y: p.priceUsd })) },
      { label: 'awards seen', data: m.prices.filter(p => p.side === 'provider').map(p => ({ x: p.at, y: p.priceUsd })) }
    ], 'USD/GPU-h')
    const box = document.querySelector('[data-testid="auctions"]')
    if (m.auctions.length === 0) { box.replaceChildren(el('p', { class: 'muted' }, 'no auction run from this node yet')); return }
    box.replaceChildren(...m.auctions.map(a => {
      const head = a.award != null
        ? `awarded to ${short(a.award.winner)} at ${num(a.award.price)} USD/GPU-h`
        : a.noBids != null ? `no bids: ${a.noBids.reason}` : `no award: ${a.noAward?.reason ?? ''}`
      const bids = el('table', { 'data-testid': 'bids' }, el('thead', {}, row(['rank', 'provider', 'USD/h', 'GPU', 'region', 'reliability', 'score', 'note'].map(h => el('b', {}, h)))),
        el('tbody', {}, ...a.bids.map(b => row([b.rank ?? '-', el('code', { title: b.provider }, short(b.provider)), num(b.price), b.gpu, b.region, num(b.reliability), b.score != null ? num(b.score, 3) : '', b.dropped ?? (b.rank === 1 ? 'best' : '')]))))
      return el('div', { class: a.award != null ? 'card' : 'card bad', 'data-testid': 'auction', 'data-job': a.jobId },
        el('div', {}, el('b', {}, a.name), ` job ${a.jobId.slice(0, 12)} · ${a.tier} · ${a.bids.length} bids, ${a.validBids} valid · `, el('span', { 'data-testid': 'auction-outcome' }, head)),
        a.award != null ? el('div', { class: 'why', 'data-testid': 'why' }, `why: ${a.award.reason}`) : '',
        bids)
    }))
  },

  async jobs () {
    const j = await api('jobs')
    const box = document.querySelector('[data-testid="renter-jobs"]')
    if (j.renter.length === 0) box.replaceChildren(el('p', { class: 'muted' }, 'no job submitted from this node'))
    else {
      box.replaceChildren(...[...j.renter].reverse().map(job => el('div', { class: job.status === 'ok' || job.status === 'running' ? 'card' : 'card bad', 'data-testid': 'renter-job', 'data-job': job.jobId },
        el('div', {}, el('b', {}, job.name), ` job ${job.jobId.slice(0, 12)} · `, el('span', { 'data-testid': 'job-status' }, job.status), ` · attempt ${job.attempt} on `, el('code', { title: job.provider ?? '' }, short(job.provider)),
          ` · sent ${bytes(job.sentBytes)} of ${bytes(job.totalBytes)} · received ${bytes(job.receivedBytes)}`),
        el('div', { 'data-testid': 'job-attestation' }, job.attestation != null ? `attestation ${job.attestation.status}, outputs ${job.attestation.outputDigest.slice(0, 16)}…, ${job.attestation.verified ? 'verified' : 'NOT verified'}` : 'no attestation yet'),
        el('div', { 'data-testid': 'job-receipt' }, job.receipt != null ? `receipt ${job.receipt.outcome}` : 'no receipt yet'),
        el('pre', { class: 'log', 'data-testid': 'job-log' }, job.logs.map(([, l]) => l).join('\n')))))
    }
    fill('provider-jobs', (j.provider?.jobs ?? []).map(r => row([el('code', {}, String(r.jobId).slice(0, 12)), el('code', { title: r.renter }, short(r.renter)), r.tier, r.state, r.status ?? r.rejected ?? '', r.gpuIndex ?? '', r.receipt ?? ''])))
  },

  async services () {
    const s = await api('services')
    const box = document.querySelector('[data-testid="deployments"]')
    if (s.deployments == null) box.replaceChildren(el('p', { class: 'muted' }, 'this node does not deploy services (a renter does)'))
    else if (s.deployments.length === 0) box.replaceChildren(el('p', { class: 'muted' }, 'no service deployed from this node'))
    else {
      box.replaceChildren(...s.deployments.map(d => {
        const g = d.gateway
        const errors = Object.entries(g.errors).map(([k, v]) => `${k} ${v}`).join(', ')
        const replicas = el('table', { 'data-testid': 'replicas' }, el('thead', {}, row(['replica', 'provider', 'region asked', 'state', 'latency ms', 'in flight', 'served', 'failed', 'since'].map(h => el('b', {}, h)))),
          el('tbody', {}, ...d.replicas.map(r => row([el('code', {}, r.id.slice(0, 8)), el('code', { title: r.provider, 'data-peer': r.provider }, short(r.provider)), r.region || 'any', r.state, num(r.ewmaMs, 1), r.inflight, r.served, r.failed, ago(r.since)], { 'data-replica': r.id }))))
        return el('div', { class: d.ready === d.size ? 'card' : 'card bad', 'data-testid': 'deployment', 'data-service': d.name },
          el('div', {}, el('b', {}, d.name), ' · ', el('span', { 'data-testid': 'service-ready' }, `${d.ready}/${d.size} ready`), ' · gateway ', el('code', { 'data-testid': 'gateway-url' }, d.url)),
          el('div', { 'data-testid': 'gateway-figures' }, `requests ${g.requests}, answered ${g.answered}, retried ${g.retried}${errors !== '' ? `, errors: ${errors}` : ''}`),
          replicas,
          el('ul', { class: 'muted', 'data-testid': 'service-events' }, ...d.events.map(e => el('li', {}, `${ago(e.at)} ${e.type}${e.provider != null ? ` ${short(e.provider)}` : ''}${e.detail != null ? `: ${e.detail}` : ''}`))))
      }))
    }
    fill('hosted', (s.hosted ?? []).map(l => row([el('code', {}, l.leaseId.slice(0, 8)), el('code', { title: l.renter }, short(l.renter)), l.draining ? 'draining' : l.healthy ? 'healthy' : 'unhealthy', l.inflight, l.requests, bytes(l.bytesIn), bytes(l.bytesOut)], { 'data-lease': l.leaseId })))
  },

  async earnings () {
    const e = await api('earnings')
    setText('bids', e.market?.bids ?? '-')
    setText('wins', e.market?.wins ?? '-')
    setText('fill-rate', e.market != null ? num(e.market.fillRate) : '-')
    setText('expected-earnings', e.market != null ? num(e.market.expectedEarningsUsd, 4) : '-')
    setText('earned', e.ledger != null ? num(e.ledger.earnedMicroUsd / 1e6, 4) : '-')
    setText('paid-jobs', e.ledger?.paidJobs ?? '-')
    line('earnings-chart', [
      { label: 'fill rate (wins/bids)', data: e.samples.map(s => ({ x: s.at, y: s.fillRate })), yAxisID: 'y' },
      { label: 'expected earnings, USD', data: e.samples.map(s => ({ x: s.at, y: s.expectedEarningsUsd })), yAxisID: 'y1' }
    ], 'fill rate', 'USD')
  },

  async reputation () {
    const r = await api('reputation')
    fill('reputation', r.providers.map(p => row([el('code', { title: p.peerId }, short(p.peerId)), num(p.score, 3), num(p.evidenceScore, 3), p.jobs, p.ok, p.failed, num(p.uptime), p.slashed ? 'SLASHED' : ''], { class: 'click', 'data-peer': p.peerId, onclick: () => { explainPeer = p.peerId; void refresh() } })))
    if (explainPeer == null && r.providers.length > 0) explainPeer = r.providers[0].peerId
    if (explainPeer == null) return
    const { explain } = await api('reputation', `?peer=${encodeURIComponent(explainPeer)}`)
    setText('explain-peer', explainPeer)
    const box = document.querySelector('[data-testid="explain"]')
    if (explain == null) { box.replaceChildren(el('p', { class: 'muted' }, 'no evidence')); return }
    const x = explain.explain
    const parts = ['direct', 'transitive', 'discounted'].map(k => row([k, x[k].renters, x[k].jobs, num(x[k].successes), num(x[k].failures)]))
    box.replaceChildren(
      el('p', {}, `score ${num(x.score, 3)} (every renter counted fully: ${num(x.evidenceScore, 3)}); ${x.seeds} trust seeds`),
      el('table', {}, el('thead', {}, row(['evidence', 'renters', 'jobs', 'successes', 'failures'].map(h => el('b', {}, h)))), el('tbody', { 'data-testid': 'evidence' }, ...parts)),
      el('table', {}, el('thead', {}, row(['renter', 'jobs', 'trust', 'weight', 'part'].map(h => el('b', {}, h)))), el('tbody', {}, ...x.renters.map(c => row([el('code', { title: c.renter }, short(c.renter)), c.jobs, num(c.trust, 3), num(c.weight, 2), c.part])))))
  }
}

/** A time line chart (Chart.js, served by the node), made once and updated in place. */
function line (id, datasets, yTitle, y1Title) {
  const scales = { x: { type: 'linear', ticks: { callback: (v) => new Date(v).toLocaleTimeString() } }, y: { title: { display: true, text: yTitle }, beginAtZero: true } }
  if (y1Title != null) scales.y1 = { position: 'right', title: { display: true, text: y1Title }, beginAtZero: true, grid: { drawOnChartArea: false } }
  // the last ten minutes at least, up to now (Chart.js alone would centre one point in a wide range)
  const xs = datasets.flatMap(d => d.data.map(p => p.x))
  const range = { min: Math.min(Date.now() - 10 * 60_000, ...xs), max: Date.now() }
  if (charts[id] == null) {
    Object.assign(scales.x, range)
    charts[id] = new Chart(document.getElementById(id), { type: 'line', data: { datasets }, options: { animation: false, maintainAspectRatio: false, parsing: true, scales } })
  } else {
    datasets.forEach((d, i) => { charts[id].data.datasets[i].data = d.data })
    Object.assign(charts[id].options.scales.x, range)
    charts[id].update()
  }
}

function current () {
  const name = location.hash.slice(1)
  return PAGES.includes(name) ? name : 'network'
}

async function refresh () {
  const page = current()
  for (const p of PAGES) document.getElementById(`page-${p}`).hidden = p !== page
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.page === page)
  try {
    await draw[page]()
    setText('updated', `updated ${new Date().toLocaleTimeString()}`)
    document.body.dataset.loaded = page
  } catch (err) {
    setText('updated', `error: ${err.message}`)
  }
}

async function main () {
  const o = await api('overview')
  setText('who', `${o.role} ${short(o.peerId)}`)
  document.body.dataset.peer = o.peerId
  window.addEventListener('hashchange', () => { delete document.body.dataset.loaded; void refresh() })
  await refresh()
  setInterval(() => { void refresh() }, REFRESH_MS)
}

void main()
