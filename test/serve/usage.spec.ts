/**
 * Usage you can prove (issue 17 item 4), between real libp2p nodes in this process with real
 * ledgers: requests go through the renter's gateway to a lease on the provider's ServeHost;
 * the provider proposes what its host counted, the renter countersigns what its gateway
 * measured, both ledgers keep the co-signed statement, and earnings come from it alone.
 */
import * as assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import { randomBytes } from 'node:crypto'
import { toHex } from '../../src/common/index.js'
import { encodeCoSigned, encodeStatement, isInvalidUsage, isUsageOverlap, openCoSignedUsage, signStatement, LEDGER_SERVICE, type LedgerService } from '../../src/ledger/index.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import { LedgerEntry, sealEntry } from '../../src/ledger/entries/entry.js'
import { verifyEntry } from '../../src/ledger/ingest/verify.js'
import { Gateway, ReplicaPool, ServeHost, SERVE_HOST_SERVICE } from '../../src/serve/index.js'
import { serveHostService } from '../../src/serve/service.js'
import { isUsageError } from '../../src/serve/index.js'
import { exchange, UsageCounter, UsageDesk, usageHandler, UsageReporter } from '../../src/serve/usage/index.js'
import { PROTOCOL } from '../../protocols/ids.js'
import { recordAttack, startInProcessNetwork, waitFor, type InProcessNetwork } from '../utils/index.js'
import { http, ROOMY_MS } from './fixtures.js'
import type { IdlegridNode } from '../../src/node/index.js'

const PRICE = 2_000_000 // µUSD per GPU-hour

function ledgerOf (node: IdlegridNode): LedgerService {
  return (node.libp2p.services as Record<string, unknown>)[LEDGER_SERVICE] as LedgerService
}

describe('serve: co-signed usage statements between real nodes (issue 17.4)', function () {
  this.timeout(30_000)
  let net: InProcessNetwork
  const host = new ServeHost({ responseMs: ROOMY_MS, idleMs: ROOMY_MS })
  let upstream: Server
  let provider: IdlegridNode
  let renter: IdlegridNode
  let desk: UsageDesk
  let gateway: Gateway
  let url: string
  const counters = new Map<string, UsageCounter>()

  /** a lease on the provider in front of the echo server, metered by the renter's gateway and desk */
  function lease (): { leaseId: Uint8Array, id: string, since: number } {
    const leaseId = new Uint8Array(randomBytes(16))
    const id = toHex(leaseId)
    const port = (upstream.address() as { port: number }).port
    host.leases.set(id, { leaseId: id, renter: renter.peerId.toString(), host: '127.0.0.1', port, healthPath: '/health', healthy: true, draining: false, inflight: 0, requests: 0, bytesIn: 0, bytesOut: 0 })
    const counter = new UsageCounter()
    counters.set(id, counter)
    const since = Date.now() - 10_000
    desk.open({ leaseId, provider: provider.peerId, gpus: 1, priceMicroUsdPerGpuHour: PRICE, since }, () => counter)
    return { leaseId, id, since }
  }

  function reporter (): UsageReporter {
    return new UsageReporter({
      key: provider.privateKey,
      self: provider.peerId,
      dialer: provider.libp2p,
      ledger: ledgerOf(provider),
      timeoutMs: 5_000
    })
  }

  function openOnProvider (
    r: UsageReporter,
    l: { leaseId: Uint8Array, id: string, since: number },
    factor = 1,
    gpus = 1
  ): void {
    const hosted = host.leases.get(l.id)!
    r.open(
      { leaseId: l.leaseId, renter: renter.peerId, gpus, priceMicroUsdPerGpuHour: PRICE, since: l.since },
      () => ({
        requests: hosted.requests * factor,
        bytesIn: hosted.bytesIn * factor,
        bytesOut: hosted.bytesOut * factor
      })
    )
  }

  async function traffic (l: { id: string, leaseId: Uint8Array }, n: number): Promise<void> {
    const pool = (gateway as any).pool as ReplicaPool
    pool.remove(pool.list()[0]?.id ?? '')
    pool.add({ id: l.id, leaseId: l.leaseId, provider: provider.peerId, region: '', state: 'ready' })
    for (let i = 0; i < n; i++) {
      const a = await http(`${url}/echo`, { method: 'POST', body: 'x'.repeat(100 + i) })
      assert.equal(a.status, 200)
    }
  }

  before(async () => {
    upstream = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end(`got ${Buffer.concat(chunks).byteLength}`) })
    })
    await new Promise<void>(resolve => upstream.listen(0, '127.0.0.1', () => { resolve() }))
    net = await startInProcessNetwork({
      providers: 1,
      renters: 1,
      extensions: (role, _i, config) => ({
        services: {
          ...(role === 'provider' ? { [SERVE_HOST_SERVICE]: serveHostService(host) } : {}),
          ...(role !== 'bootstrap' ? { [LEDGER_SERVICE]: ledgerService({ dataDir: config.dataDir, role, summaryIntervalMs: 0, flushOnStopMs: 0 }) } : {})
        }
      })
    })
    provider = net.providers[0]!
    renter = net.renters[0]!
    await renter.libp2p.dial(provider.libp2p.getMultiaddrs()[0] as any)
    desk = new UsageDesk({ key: renter.privateKey, self: renter.peerId, ledger: ledgerOf(renter) })
    await renter.libp2p.handle(PROTOCOL.usage, usageHandler(desk, 5_000))
    const pool = new ReplicaPool(16)
    gateway = new Gateway(renter.libp2p, pool, { port: 0, bind: '127.0.0.1', maxBodyBytes: 64 * 1024, timeoutMs: ROOMY_MS, meter: (id) => counters.get(id) })
    url = await gateway.start()
  })

  after(async () => {
    await gateway?.stop()
    upstream?.closeAllConnections()
    upstream?.close()
    await net?.stop()
  })

  it('an honest interval: both ledgers hold the same co-signed statement, and it is the provider\'s earnings', async () => {
    const l = lease()
    const r = reporter()
    openOnProvider(r, l)
    await traffic(l, 5)
    const report = await r.report(l.leaseId)
    assert.equal(report.outcome, 'recorded', JSON.stringify(report))
    if (report.outcome !== 'recorded') return
    assert.equal(report.signed.requests, 5)
    assert.equal(report.claimed.requests, 5)
    assert.equal(report.signed.bytesIn, host.leases.get(l.id)!.bytesIn)
    await waitFor(() => desk.stats.recorded >= 1, { timeoutMs: 5_000 })
    const held = async (node: IdlegridNode): Promise<string[]> => {
      const out: string[] = []
      for await (const rec of ledgerOf(node).store.entries()) {
        if (rec.kind === LedgerEntry.BodyKind.USAGE && rec.authorId === node.peerId.toString()) {
          out.push(toHex((await openCoSignedUsage(rec.body)).statement))
        }
      }
      return out
    }
    const [p, q] = [await held(provider), await held(renter)]
    assert.equal(p.length, 1)
    assert.deepEqual(p, q, 'provider and renter hold the same statement')
    const earnings = ledgerOf(provider).earnings(provider.peerId.toString())
    assert.equal(earnings.service.statements, 1)
    assert.equal(earnings.service.requests, 5)
    assert.equal(earnings.service.earnedMicroUsd, report.signed.amountMicroUsd)
    assert.ok(report.signed.amountMicroUsd > 0)
    // a second interval continues where the first ended
    await traffic(l, 2)
    const second = await r.report(l.leaseId)
    assert.equal(second.outcome, 'recorded')
    if (second.outcome === 'recorded') {
      assert.equal(second.signed.intervalStart, report.signed.intervalEnd)
      assert.equal(second.signed.requests, 2)
    }
    r.close(l.leaseId)
  })

  it('the serve host service reports a hosted lease: its last statement when the lease ends, at the award\'s price', async () => {
    assert.ok(host.usage != null, 'a provider with a ledger reports usage')
    const leaseId = new Uint8Array(randomBytes(16))
    const id = toHex(leaseId)
    const counter = new UsageCounter()
    desk.open(
      { leaseId, provider: provider.peerId, gpus: 1, priceMicroUsdPerGpuHour: PRICE, since: Date.now() },
      () => counter
    )
    const hooks = await host.begin({ leaseId: id, renter: renter.peerId.toString(), healthPath: '/health', priceMicroUsdPerGpuHour: PRICE })
    const recorded = desk.stats.recorded
    hooks.ended()
    await waitFor(() => desk.stats.recorded > recorded, { timeoutMs: 20_000, what: 'the ended lease\'s last statement to be recorded' })
    // the renter records before its answer reaches the provider, which records then
    const last = await waitFor(() => host.usage?.last.get(id), { timeoutMs: 5_000, what: 'the provider\'s outcome for the ended lease' })
    assert.equal(last?.outcome, 'recorded', JSON.stringify(last))
    if (last?.outcome === 'recorded') assert.equal(last.signed.priceMicroUsdPerGpuHour, PRICE)
  })

  it('red team: a provider claiming twice the requests, bytes and GPU-seconds gets the renter\'s measured figures only', async () => {
    const l = lease()
    const r = reporter()
    // twice what its host counted, and two GPUs for a one-GPU lease
    openOnProvider(r, l, 2, 2)
    await traffic(l, 4)
    const before = ledgerOf(provider).earnings(provider.peerId.toString()).service
    const report = await r.report(l.leaseId)
    assert.equal(report.outcome, 'recorded', JSON.stringify(report))
    if (report.outcome !== 'recorded') return
    const measured = counters.get(l.id)!
    assert.equal(report.claimed.requests, 8)
    assert.equal(report.signed.requests, measured.requests)
    assert.equal(report.signed.bytesIn, measured.bytesIn)
    assert.equal(report.signed.bytesOut, measured.bytesOut)
    const interval = report.signed.intervalEnd - report.signed.intervalStart
    assert.ok(report.claimed.gpuMs >= 2 * interval - 50, 'claimed two GPUs')
    assert.ok(report.signed.gpuMs <= interval, `signed ${report.signed.gpuMs} GPU-ms for one GPU over ${interval} ms`)
    const after = ledgerOf(provider).earnings(provider.peerId.toString()).service
    const paidRequests = after.requests - before.requests
    const paid = after.earnedMicroUsd - before.earnedMicroUsd
    assert.equal(paidRequests, measured.requests)
    assert.equal(paid, report.signed.amountMicroUsd)
    assert.ok(paid <= Math.floor(interval * PRICE / 3600_000) + 1)
    recordAttack({
      issue: '17.4',
      attack: 'provider proposes 2x requests, bytes and GPU-seconds for a lease interval',
      got: `co-signed ${report.signed.requests} of ${report.claimed.requests} claimed requests, ${report.signed.gpuMs} of ${report.claimed.gpuMs} GPU-ms; earnings +${paid} µUSD (= measured)`,
      limit: 'the renter signs min(claimed, measured); earnings count co-signed statements only'
    })
    r.close(l.leaseId)
  })

  it('red team: a forged renter signature, an overlapping interval and garbage are refused with typed reasons', async () => {
    const l = lease()
    const ledger = ledgerOf(provider)
    const base = {
      leaseId: l.leaseId,
      provider: provider.peerId.toMultihash().bytes,
      renter: renter.peerId.toMultihash().bytes,
      requests: 1000,
      gpuMs: 60_000,
      bytesIn: 0,
      bytesOut: 0,
      priceMicroUsdPerGpuHour: PRICE
    }
    const now = Date.now()
    const statement = encodeStatement({ ...base, intervalStart: now - 60_000, intervalEnd: now })
    // forged: the provider signs the renter's part with its own key
    const forged = encodeCoSigned(
      statement,
      signStatement(provider.privateKey, statement),
      signStatement(provider.privateKey, statement)
    )
    await assert.rejects(ledger.recordUsage(forged), (err: any) => isInvalidUsage(err) && err.reason === 'bad-renter-signature')
    // the renter's desk refuses it too (it never countersigned it)
    await assert.rejects(
      exchange(
        provider.libp2p,
        renter.peerId,
        {
          signed: {
            statement,
            providerSignature: signStatement(provider.privateKey, statement),
            renterSignature: signStatement(provider.privateKey, statement)
          }
        },
        5_000
      ),
      (err: any) => isUsageError(err) && err.remote && err.wireCode === 'BAD_SIGNATURE'
    )
    const before = ledger.earnings(provider.peerId.toString()).service.earnedMicroUsd

    // overlapping: a real co-signed interval, then a proposal starting inside it
    const r = reporter()
    openOnProvider(r, l)
    await traffic(l, 1)
    const ok = await r.report(l.leaseId)
    assert.equal(ok.outcome, 'recorded')
    if (ok.outcome !== 'recorded') return
    const overlapping = encodeStatement({
      ...base,
      requests: 1,
      intervalStart: ok.signed.intervalStart + 1,
      intervalEnd: ok.signed.intervalEnd + 1
    })
    await assert.rejects(exchange(provider.libp2p, renter.peerId, { proposal: { statement: overlapping } }, 5_000), (err: any) => isUsageError(err) && err.wireCode === 'OVERLAP')
    // the same start again (a lost answer, or a try at a second statement): the same statement
    // comes back, nothing new to sign
    const resent = await exchange(
      provider.libp2p,
      renter.peerId,
      {
        proposal: {
          statement: encodeStatement({ ...base, intervalStart: ok.signed.intervalStart, intervalEnd: Date.now() })
        }
      },
      5_000
    )
    assert.equal(toHex(resent.countersigned!.statement), toHex(encodeStatement(ok.signed)))
    await assert.rejects(
      ledger.recordUsage(
        encodeCoSigned(
          resent.countersigned!.statement,
          signStatement(provider.privateKey, resent.countersigned!.statement),
          resent.countersigned!.renterSignature
        )
      ),
      (err: any) => isUsageOverlap(err) && err.reason === 'duplicate'
    )
    // both parties' signatures on an overlapping statement (as a colluding pair could make): the
    // ledger refuses it in our feed
    const both = encodeCoSigned(
      overlapping,
      signStatement(provider.privateKey, overlapping),
      signStatement(renter.privateKey, overlapping)
    )
    await assert.rejects(ledger.recordUsage(both), (err: any) => isUsageOverlap(err) && err.reason === 'overlap')
    // an entry carrying the forged statement, as a peer would send it: verification refuses it
    const entry = sealEntry(provider.privateKey, provider.peerId, {
      seq: 1,
      prevHash: new Uint8Array(0),
      time: Date.now(),
      kind: LedgerEntry.BodyKind.USAGE,
      body: forged
    })
    await assert.rejects(verifyEntry(entry.envelope), (err: any) => isInvalidUsage(err) && err.code === 'ERR_LEDGER_USAGE')
    // garbage and oversized statements
    await assert.rejects(exchange(provider.libp2p, renter.peerId, { proposal: { statement: new Uint8Array([0xff, 0xff, 0xff]) } }, 5_000), (err: any) => isUsageError(err) && err.wireCode === 'BAD_STATEMENT')
    await assert.rejects(exchange(provider.libp2p, renter.peerId, { proposal: { statement: new Uint8Array(600) } }, 5_000), (err: any) => isUsageError(err) && err.wireCode === 'BAD_STATEMENT' && /oversized/.test(err.message))
    await assert.rejects(ledger.recordUsage(new Uint8Array(2_000)), (err: any) => isInvalidUsage(err) && err.reason === 'oversized')
    await assert.rejects(ledger.recordUsage(Uint8Array.of(0x0a, 0x03, 1, 2, 3)), (err: any) => isInvalidUsage(err))
    // a frame over the 1 KiB bound: the stream ends, nothing is signed
    await assert.rejects(exchange(provider.libp2p, renter.peerId, { proposal: { statement: new Uint8Array(4096) } }, 5_000), (err: any) => isUsageError(err) && err.wireCode === 'PROTOCOL')
    // a statement for someone else's lease answers like no lease
    const stranger = encodeStatement({
      ...base,
      leaseId: new Uint8Array(16),
      intervalStart: now - 1000,
      intervalEnd: now
    })
    await assert.rejects(exchange(provider.libp2p, renter.peerId, { proposal: { statement: stranger } }, 5_000), (err: any) => isUsageError(err) && err.wireCode === 'NO_LEASE')
    const after = ledger.earnings(provider.peerId.toString()).service.earnedMicroUsd
    assert.equal(after - before, ok.signed.amountMicroUsd, 'only the co-signed interval was paid')
    recordAttack({
      issue: '17.4',
      attack: 'forged renter signature, overlapping interval (proposed and co-signed), garbage and oversized statements',
      got: `paid ${after - before} µUSD (the one honest interval); refusals: BAD_SIGNATURE, OVERLAP, BAD_STATEMENT, NO_LEASE, ERR_LEDGER_USAGE(_OVERLAP)`,
      limit: 'both signatures checked; one statement per lease interval; 512-byte statement bound'
    })
    r.close(l.leaseId)
  })
})
