import { strict as assert } from 'node:assert'
import { chmod } from 'node:fs/promises'
import { join } from 'node:path'
import { CAPACITY_SERVICE, loadProviderSetup, type CapacitySource } from '../../src/capability/index.js'
import { buildNode } from '../../src/compose/index.js'
import { resolveConfig } from '../../src/config/index.js'
import { EXEC_SERVICE } from '../../src/exec/provider/job-service-init.js'
import { ProcessRunner } from '../../src/exec/runners/index.js'
import { LEDGER_SERVICE } from '../../src/ledger/index.js'
import { MARKET_PROVIDER_SERVICE, parseJobSpec, type MarketProviderService } from '../../src/market/index.js'
import { toJobRequest } from '../../src/market/renter/job-spec.js'
import { CONTROL_HANDLERS } from '../../src/control/index.js'
import type { JobRequest } from '../../protocols/market.js'
import type { IdlegridNode } from '../../src/node/index.js'
import { createNode } from '../../src/node/index.js'
import { tempDir } from '../utils/index.js'
import { execOf, execProviderServices } from './fixtures.js'

describe('exec: typed wiring', function () {
  this.timeout(60_000)
  let tmp: { path: string, cleanup: () => Promise<void> }
  before(async () => {
    tmp = await tempDir('idlegrid-exec-wiring-')
    // jobs run as another user when we are root: it must pass through to the work roots
    await chmod(tmp.path, 0o711)
  })
  after(async () => { await tmp.cleanup() })

  const config = (name: string): ReturnType<typeof resolveConfig> => resolveConfig({ role: 'provider', flags: { dataDir: join(tmp.path, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], heartbeatSeconds: 60 } })
  const init = (name: string): Parameters<typeof execProviderServices>[0] => ({
    runner: new ProcessRunner(),
    gpus: [{ index: 0, uuid: 'GPU-sim-h100-0', simulated: true, modelKey: 'h100-80gb' }],
    workRoot: join(tmp.path, `${name}-work`)
  })

  it('a node with the job service but without the ledger, the market provider or the capacity service they depend on is not built', async () => {
    for (const missing of [LEDGER_SERVICE, MARKET_PROVIDER_SERVICE, CAPACITY_SERVICE]) {
      const services = execProviderServices(init(`no-${missing}`), join(tmp.path, `no-${missing}`))
      delete services[missing]
      await assert.rejects(createNode(config(`no-${missing}`), { services }), (err: Error) => {
        assert.equal(err.name, 'UnmetServiceDependenciesError', err.message)
        return true
      })
    }
  })

  it('the composition root builds a provider whose job service has its ledger and market provider', async () => {
    const cfg = config('provider')
    const { profile } = await loadProviderSetup({ raw: cfg.provider, flags: { region: 'eu-west', 'price-floor': '1.00' }, simulateGpu: ['H100:80'] })
    const node = await buildNode(cfg, { provider: { profile, runner: 'process' } })
    try {
      const services = node.libp2p.services as Record<string, unknown>
      assert.ok(
        services[LEDGER_SERVICE] != null &&
          services[MARKET_PROVIDER_SERVICE] != null &&
          services[EXEC_SERVICE] != null
      )
      assert.equal(execOf(node).capacity().total, 1)
      // the bid engine and the ledger read the job service's own slots
      assert.equal((services[CAPACITY_SERVICE] as CapacitySource).totalSlots(), 1)
      const jobs = await execOf(node)[CONTROL_HANDLERS]()['exec.jobs']?.() as { disk: { budgetBytes: number }, maxSlotsPerRenter: number }
      assert.equal(jobs.disk.budgetBytes, 16 * 1024 ** 3, 'the default disk budget: (4 + 4 GiB) x 2 per GPU')
      assert.equal(jobs.maxSlotsPerRenter, 1)
      const decision = marketOf(node).explain(aJob(node))
      assert.doesNotMatch(decision.bid ? '' : decision.detail, /disk budget/)
    } finally {
      await node.stop()
    }
  })

  it('the policy\'s slots per renter and disk budget (flags or config) reach the job service, and the bid engine reads the disk budget', async () => {
    const cfg = config('policy-limits')
    const { profile } = await loadProviderSetup({ raw: { diskBudgetGiB: 2 }, flags: { region: 'eu-west', 'price-floor': '1.00', 'max-slots-per-renter': '1' }, simulateGpu: ['H100:80:2'] })
    const node = await buildNode(cfg, { provider: { profile, runner: 'process' } })
    try {
      const jobs = await execOf(node)[CONTROL_HANDLERS]()['exec.jobs']?.() as { disk: { budgetBytes: number }, maxSlotsPerRenter: number }
      assert.equal(jobs.maxSlotsPerRenter, 1, 'one slot per renter though the provider has 2 GPUs')
      assert.equal(jobs.disk.budgetBytes, 2 * 1024 ** 3)
      const capacity = (node.libp2p.services as Record<string, unknown>)[CAPACITY_SERVICE] as CapacitySource
      assert.equal(capacity.freeDiskBytes?.(), 2 * 1024 ** 3)
      // 2 GiB cannot take even a job without inputs (the output bound is 4 GiB): no bid
      const decision = marketOf(node).explain(aJob(node))
      assert.equal(decision.bid, false)
      assert.match(decision.bid ? '' : decision.detail, /disk budget: jobs in progress leave 2147483648 bytes, a job needs at least 4294967296/)
    } finally {
      await node.stop()
    }
  })
})

function marketOf (node: IdlegridNode): MarketProviderService {
  return (node.libp2p.services as Record<string, unknown>)[MARKET_PROVIDER_SERVICE] as MarketProviderService
}

/** A job request any provider of these tests could run. */
function aJob (node: IdlegridNode): JobRequest {
  return toJobRequest(parseJobSpec({ name: 'probe', runtime: { command: ['true'] } }), { renter: node.peerId.toMultihash().bytes })
}
