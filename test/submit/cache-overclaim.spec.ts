/**
 * Red team, on real nodes in this process (a bootstrap, two providers on the process runner with
 * a simulated H100, a renter running jobs through its submit service): a provider whose bids claim
 * that its input cache holds every named input of every job (Bid.cached_bytes) wins on the
 * locality term against a cheaper honest provider. Its Held frame shows the truth; the renter
 * books it, and its next lying bid no longer beats the honest one.
 */
import * as assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { chmod, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { CAPACITY_SERVICE, loadProviderSetup, type CapacitySource, type ProviderProfile } from '../../src/capability/index.js'
import { progress } from '../../src/cli/commands/submit-job.js'
import { roleExtensions } from '../../src/compose/index.js'
import { MARKET_RENTER_SERVICE, type AuctionReport, type MarketRenterService } from '../../src/market/index.js'
import { SUBMIT_SERVICE, type SubmitEvent, type SubmitService } from '../../src/submit/service.js'
import { recordAttack, startInProcessNetwork, tempDir, type InProcessNetwork } from '../utils/index.js'
import { waitForMarketMesh } from '../market/fixtures.js'
import type { IdlegridNode } from '../../src/node/index.js'
import type { JobSummary } from '../../src/submit/summary.js'

const MiB = 1024 * 1024
/** What the liar's bids say its cache holds of any job's named inputs: far more than any job names. */
const LIE_BYTES = 64 * 1024 * MiB

describe('red team: a provider that overclaims its input cache (Bid.cached_bytes) on real nodes', function () {
  this.timeout(180_000)
  let tmp: { path: string, cleanup: () => Promise<void> }
  let net: InProcessNetwork
  const reports: AuctionReport[] = []
  /**
   * price floors: the liar's 1.20 claiming everything scores 0.96; the honest 1.05 claims nothing.
   * Regions: a job can be kept to the honest one (eu-west).
   */
  const providers = [{ floor: '1.20', region: 'eu-central' }, { floor: '1.05', region: 'eu-west' }]

  before(async () => {
    tmp = await tempDir('idlegrid-cache-overclaim-')
    // process jobs may run as another user when we are root: the temp dir must let them through
    await chmod(tmp.path, 0o711)
    const profiles: ProviderProfile[] = []
    for (const { floor, region } of providers) {
      const { profile } = await loadProviderSetup({ raw: {}, flags: { region, 'price-floor': floor }, simulateGpu: ['H100:80'] })
      profiles.push(profile)
    }
    net = await startInProcessNetwork({
      providers: 2,
      renters: 1,
      extensions: (role, i, config) => {
        const ext = roleExtensions(config, role === 'provider' ? { provider: { profile: profiles[i], runner: 'process' } } : {})
        if (role === 'provider' && i === 0) {
          // the liar: its bid engine asks the capacity service what the cache holds, and hears "everything"
          const real = ext.services[CAPACITY_SERVICE] as (components: unknown) => CapacitySource
          ext.services[CAPACITY_SERVICE] = (components: unknown) => Object.assign(real(components), {
            heldInputs: (_renter: string, digests: readonly Uint8Array[]) =>
              ({ count: digests.length, bytes: LIE_BYTES })
          })
        }
        return ext
      }
    })
    for (const p of net.providers) await renter().libp2p.dial(p.libp2p.getMultiaddrs()[0])
    await waitForMarketMesh(net)
    market().events.addEventListener('report', (e) => { reports.push((e as CustomEvent<AuctionReport>).detail) })
    await writeFile(join(tmp.path, 'first.bin'), randomBytes(2 * MiB))
    await writeFile(join(tmp.path, 'words.txt'), 'hello idlegrid\n')
    await writeFile(join(tmp.path, 'third.bin'), randomBytes(2 * MiB))
  })
  after(async () => {
    await net?.stop()
    await tmp?.cleanup()
  })

  const renter = (): IdlegridNode => net.renters[0] as IdlegridNode
  const liar = (): string => (net.providers[0] as IdlegridNode).peerId.toString()
  const honest = (): string => (net.providers[1] as IdlegridNode).peerId.toString()
  const service = <S>(name: string): S => (renter().libp2p.services as Record<string, unknown>)[name] as S
  const market = (): MarketRenterService => service<MarketRenterService>(MARKET_RENTER_SERVICE)

  /** Runs a job with `input` (its bytes counted and copied to the output) through the renter's submit service. */
  async function run (
    name: string,
    input: string,
    regions?: string[]
  ): Promise<{ summary: JobSummary, events: SubmitEvent[], report: AuctionReport }> {
    const submit = service<SubmitService>(SUBMIT_SERVICE)
    const events: SubmitEvent[] = []
    const before = reports.length
    const summary = await submit.submit({
      spec: {
        name,
        tier: 'silver',
        workload: 'evaluation',
        runtime: { command: ['/bin/sh', '-c', 'wc -c inputs/* > outputs/sizes.txt'] },
        inputs: [join(tmp.path, input)],
        estimatedMinutes: 1,
        ...(regions != null ? { constraints: { regions } } : {}),
        auction: { bidWindowMs: 1_000, acceptTimeoutMs: 3_000 }
      },
      baseDir: join(tmp.path, 'out'),
      maxAttempts: 1
    }, { onEvent: e => events.push(e) })
    const report = reports[before]
    assert.ok(report != null, 'the auction reported')
    return { summary, events, report }
  }
  const row = (report: AuctionReport, provider: string): AuctionReport['bids'][number] | undefined =>
    report.bids.find(b => b.provider === provider && b.dropped == null)

  it('the lie wins once on locality; Held shows it, the job goes on, and the lying bid then loses to the cheaper honest one', async () => {
    // 1. both neutral: the liar's claim of the whole 2 MiB input wins against the cheaper honest bid
    const first = await run('first', 'first.bin')
    assert.equal(first.summary.status, 'ok', first.summary.detail)
    assert.equal(first.report.award?.winner, liar(), JSON.stringify(first.report.bids))
    assert.equal(row(first.report, liar())?.locality, 1)
    assert.ok((row(first.report, liar())?.price ?? 0) > (row(first.report, honest())?.price ?? Infinity), 'the liar asks more')
    const overclaim = first.events.find(e => e.type === 'cache-overclaim')
    assert.deepEqual(overclaim, {
      type: 'cache-overclaim',
      attempt: 1,
      provider: liar(),
      claimedBytes: LIE_BYTES,
      heldBytes: 0,
      claimedDatasets: 1,
      heldDatasets: 0
    })
    assert.equal(first.summary.inputs?.sentBytes, 2 * MiB, 'the inputs were simply sent')
    const printed: string[] = []
    progress(overclaim as SubmitEvent, { info: (line: string) => { printed.push(line) } })
    assert.match(printed[0] ?? '', /held 65536\.0 MiB of the job's inputs; it holds 0\.0 MiB: no locality credit/)

    // 2. a job only the honest provider may serve (its region): now each has one good job here,
    // so their reliabilities are alike again
    const second = await run('second', 'words.txt', ['eu-west'])
    assert.equal(second.summary.status, 'ok', second.summary.detail)
    assert.equal(second.report.award?.winner, honest())

    // 3. the same lie about a new input: no locality credit, and the report says why
    const third = await run('third', 'third.bin')
    assert.equal(third.summary.status, 'ok', third.summary.detail)
    const lying = row(third.report, liar())
    assert.equal(lying?.locality, 0)
    assert.match(lying?.noLocality ?? '', /^cache-overclaim: .*held 0\.0 MiB\); until /)
    assert.equal(third.report.award?.winner, honest(), JSON.stringify(third.report.bids))
    assert.equal(third.events.some(e => e.type === 'cache-overclaim'), false, 'the honest winner claimed nothing')
    recordAttack({
      issue: 'cache-overclaim',
      attack: 'a provider\'s bids claim its input cache holds every named input of the job (Bid.cached_bytes) to win on the locality term at a higher price',
      got: `won the first job at ${first.report.award?.price ?? '?'} USD/h over a ${row(first.report, honest())?.price ?? '?'} USD/h honest bid; ` +
        `its Held named 0 of the ${2 * MiB} input bytes: booked, and its next lying bid got locality 0 and lost`,
      limit: 'the renter checks the winning bid\'s claim against the Held frame; more than 5 % of the named bytes short: no locality credit from this renter for 24 h'
    })
  })
})
