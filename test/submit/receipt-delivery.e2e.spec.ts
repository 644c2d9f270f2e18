/**
 * Issue 36 item 2: an honest receipt must leave its renter. Each round starts a FRESH network
 * (a bootstrap and one provider, separate `idlegrid` processes on 127.0.0.1) and runs
 * `idlegrid submit` as a short-lived renter on a fresh data directory; once submit has exited,
 * the provider or the bootstrap must already hold the renter's feed up to its receipt, with
 * no `idlegrid ledger flush` or other help. RECEIPT_ROUNDS=N runs N rounds (default 2, for CI).
 */
import * as assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { callControl } from '../../src/control/client.js'
import { loadOrCreateKey } from '../../src/identity/index.js'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { submitJob } from '../exec/fixtures.js'
import { DEFAULT_PROVIDER_ARGS, startLocalNetwork, tempDir, waitForMesh, type NodeProcess } from '../utils/index.js'

const ROUNDS = Math.max(1, Number(process.env.RECEIPT_ROUNDS ?? 2))

interface Shown { head?: { seq: number, hash: string }, entries: Array<{ seq: number, kind: string }> }
const show = async (n: NodeProcess, peer: string): Promise<Shown> => await callControl(n.dataDir, 'ledger.show', { peer, limit: 16 }, { timeoutMs: 10_000 }) as Shown

describe('submit: a short-lived renter\'s receipt reaches a peer before submit exits (issue 36 item 2)', function () {
  this.timeout(ROUNDS * 60_000)

  it(`on ${ROUNDS} fresh network(s), the provider or the bootstrap holds the receipt when submit has exited`, async () => {
    const lost: string[] = []
    const misreported: string[] = []
    for (let round = 1; round <= ROUNDS; round++) {
      const tmp = await tempDir('idlegrid-receipt-delivery-')
      const net = await startLocalNetwork({ baseDir: tmp.path, providers: 1, renters: 0, providerArgs: () => ['--runner', 'process', ...DEFAULT_PROVIDER_ARGS] })
      try {
        const view = await waitForMesh(net.all, 30_000)
        assert.ok(view.complete, view.missing.join('\n'))
        await writeFile(join(tmp.path, 'true.yaml'), ['name: honest', 'tier: silver', 'workload: evaluation', 'runtime:', '  command: [/bin/true]', 'estimatedMinutes: 1', 'auction:', '  bidWindowMs: 1000', '  acceptTimeoutMs: 3000'].join('\n') + '\n')
        const renterDir = join(tmp.path, 'renter')
        // no node runs on renterDir: submit starts a short-lived renter peer, which stops when submit exits
        const run = await submitJob(renterDir, tmp.path, 'true.yaml', ['--bootstrap', net.bootstrap.addrs[0] as string, '--out-dir', join(tmp.path, 'out')], 90_000)
        assert.equal(run.summary.status, 'ok', `round ${round}: ${JSON.stringify(run.summary)}\n${run.stderr.slice(-2000)}`)
        assert.equal(run.summary.receipt?.outcome, 'OK', `round ${round}: the renter signed an OK receipt`)
        // the renter's process is gone: whatever holds its feed now got it before submit exited
        const renter = peerIdFromPrivateKey(await loadOrCreateKey(renterDir)).toString()
        const held = await Promise.all(
          [net.providers[0] as NodeProcess, net.bootstrap].map(async n => await show(n, renter))
        )
        const receipts = held.map(s => s.entries.filter(e => e.kind === 'receipt').length)
        if (receipts.every(n => n === 0)) lost.push(`round ${round}: neither the provider nor the bootstrap holds the receipt (exit ${String(run.code)}, ledger ${JSON.stringify(run.summary.ledger)})`)
        else if (run.code !== 0 || run.summary.ledger?.acknowledged !== true) misreported.push(`round ${round}: the receipt is held, yet submit exited ${String(run.code)} with ledger ${JSON.stringify(run.summary.ledger)}`)
      } finally {
        await net.stop()
        await tmp.cleanup()
      }
    }
    assert.deepEqual([...lost, ...misreported], [], `${lost.length} of ${ROUNDS} rounds lost the receipt, ${misreported.length} misreported it:\n${[...lost, ...misreported].join('\n')}`)
  })
})
