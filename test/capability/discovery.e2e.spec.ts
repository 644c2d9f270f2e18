import * as assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BIN_PATH, startLocalNetwork, tempDir, waitFor, type LocalNetwork } from '../utils/index.js'

const FAKE_SMI = fileURLToPath(new URL('../../../test/fixtures/nvidia-smi/fake-nvidia-smi.sh', import.meta.url))
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat']
/** a whole day three days from now (UTC): that provider is closed now */
const CLOSED_DAY = DAYS[new Date(Date.now() + 3 * 86_400_000).getUTCDay()] as string
/** the provider stopped in the last test advertises with this record lifetime */
const SHORT_TTL_S = 8

const PROVIDER_ARGS: string[][] = [
  ['--simulate-gpu', 'H100 80GB:80:2', '--region', 'eu-west', '--price-floor', '2.50'],
  ['--simulate-gpu', 'A100 40GB:40:8', '--region', 'us-east', '--price-floor', '1.10', '--tiers', 'silver,bronze'],
  ['--simulate-gpu', 'RTX 4090:24', '--region', 'eu-central', '--price-floor', '0.40', '--workloads', 'inference'],
  ['--nvidia-smi', FAKE_SMI, '--region', 'us-west', '--price-floor', '1.90', '--windows', CLOSED_DAY],
  ['--simulate-gpu', 'L40S:48', '--region', 'ap-south', '--price-floor', '0.90', '--record-ttl-seconds', String(SHORT_TTL_S)]
]

interface Run { code: number | null, stdout: string, stderr: string }

/** `idlegrid ARGS` as a real process, bounded in time. */
async function idlegrid (args: string[], timeoutMs = 45_000): Promise<Run> {
  return await new Promise(resolve => {
    execFile(process.execPath, [BIN_PATH, ...args], {
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      env: { ...process.env, IDLEGRID_BOOTSTRAP: '', IDLEGRID_DATA_DIR: '' }
    }, (err, stdout, stderr) => {
      resolve({ code: err == null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr })
    })
  })
}

interface Listed {
  peerId: string
  gpus: Array<{ model: string, vramGb: number, count: number }>
  region: string
  residency: string
  priceFloor: number
  simulated: boolean
}

describe('capability discovery end to end: providers as separate processes, `idlegrid market ls` as a CLI', function () {
  this.timeout(180_000)
  let dir: Awaited<ReturnType<typeof tempDir>>
  let network: LocalNetwork | undefined

  before(async () => {
    dir = await tempDir()
    network = await startLocalNetwork({
      baseDir: dir.path,
      providers: PROVIDER_ARGS.length,
      renters: 1,
      heartbeatSeconds: 2,
      providerArgs: i => PROVIDER_ARGS[i] as string[]
    })
  })

  after(async () => {
    await network?.stop()
    await dir.cleanup()
  })

  /** market ls on the running renter node (its control socket) */
  const ls = async (...filters: string[]): Promise<{ run: Run, listed: Listed[] }> => {
    assert.ok(network != null)
    const run = await idlegrid(['market', 'ls', '--json', '--verbose', '--data-dir', network.renters[0].dataDir, ...filters])
    assert.equal(run.code, 0, run.stderr)
    return { run, listed: JSON.parse(run.stdout.trim()) as Listed[] }
  }
  const ids = (listed: Listed[]): string[] => listed.map(p => p.peerId).sort()
  const providers = (...indexes: number[]): string[] => indexes.map(i => network?.providers[i]?.peerId as string).sort()

  it('lists every provider once their records are published', async () => {
    const { listed } = await waitFor(async () => {
      const result = await ls()
      return result.listed.length === PROVIDER_ARGS.length ? result : undefined
    }, { timeoutMs: 60_000, intervalMs: 1_000, what: 'all five providers listed' })
    assert.deepEqual(ids(listed), providers(0, 1, 2, 3, 4))
    const h100 = listed.find(p => p.peerId === network?.providers[0]?.peerId)
    assert.deepEqual(h100?.gpus, [{ model: 'h100-80gb', vramGb: 80, vramMib: 81920, count: 2, simulated: true }])
    assert.equal(h100?.priceFloor, 2.5)
    assert.equal(h100?.residency, 'eu')
    const detected = listed.find(p => p.peerId === network?.providers[3]?.peerId)
    assert.equal(detected?.simulated, false)
    assert.equal(detected?.gpus[0]?.model, 'h100-80gb')
  })

  it('returns exactly the matching providers for each filter combination', async () => {
    const cases: Array<[string[], number[]]> = [
      [['--gpu', 'H100'], [0, 3]],
      [['--gpu', 'h100', '--region', 'eu-west'], [0]],
      [['--gpu', 'a100', '--gpu', 'L40S'], [1, 4]],
      [['--min-vram', '40'], [0, 1, 3, 4]],
      [['--residency', 'us'], [1, 3]],
      [['--tier', 'gold'], [0, 2, 3, 4]],
      [['--workload', 'training', '--residency', 'eu'], [0]],
      [['--available-now'], [0, 1, 2, 4]],
      [['--no-simulated'], [3]],
      [['--min-vram', '24', '--no-simulated', '--available-now'], []]
    ]
    for (const [filters, expected] of cases) {
      const { listed } = await ls(...filters)
      assert.deepEqual(ids(listed), providers(...expected), filters.join(' '))
    }
  })

  it('says which filter removed how many when nothing matches', async () => {
    assert.ok(network != null)
    const run = await idlegrid(['market', 'ls', '--data-dir', network.renters[0].dataDir, '--gpu', 'rtx-4090', '--workload', 'training'])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /no providers found: 1 candidate under gpu\/rtx-4090; --workload removed 1/)
  })

  it('works from a short-lived renter peer that bootstraps, with a table by default', async () => {
    assert.ok(network != null)
    const run = await idlegrid(['market', 'ls', '--data-dir', join(dir.path, 'short-lived'), '--bootstrap', network.bootstrap.addrs[0] as string, '--residency', 'eu'])
    assert.equal(run.code, 0, run.stderr)
    const lines = run.stdout.trim().split('\n')
    assert.match(lines[0] as string, /^PEER\s+GPUS\s+VRAM\s+REGION\s+FLOOR\/GPU-H\s+WINDOWS\s+SIMULATED\s+AGE$/)
    assert.equal(lines.length, 4, run.stdout)
    assert.match(run.stdout, /2x h100-80gb .* eu-west \(eu\) +\$2\.50/)
    assert.match(run.stdout, /1x rtx-4090 .* eu-central \(eu\) +\$0\.40/)
  })

  it('refuses bad filters with exit 2 naming the flag', async () => {
    const run = await idlegrid(['market', 'ls', '--tier', 'platinum', '--data-dir', join(dir.path, 'unused')])
    assert.equal(run.code, 2)
    assert.match(run.stderr, /config field "tier"/)
  })

  it('a provider without GPUs or with a bad policy refuses to start', async () => {
    const noGpu = await idlegrid(['provider', '--data-dir', join(dir.path, 'no-gpu'), '--region', 'eu-west', '--price-floor', '1', '--nvidia-smi', '/nonexistent/nvidia-smi'])
    assert.equal(noGpu.code, 1)
    assert.match(noGpu.stderr, /nvidia-smi not found: no NVIDIA driver on this machine; use --simulate-gpu/)
    const badPolicy = await idlegrid(['provider', '--data-dir', join(dir.path, 'bad-policy'), '--region', 'eu-west', '--price-floor', 'cheap', '--simulate-gpu', 'H100:80'])
    assert.equal(badPolicy.code, 2)
    assert.match(badPolicy.stderr, /config field "provider.priceFloor"/)
  })

  it('a stopped provider disappears once its record expires', async () => {
    assert.ok(network != null)
    const gone = network.providers[4]
    assert.ok(gone != null)
    assert.equal(await gone.stop(), 0)
    const { run } = await waitFor(async () => {
      const result = await ls('--gpu', 'l40s')
      return result.listed.length === 0 ? result : undefined
    }, { timeoutMs: (SHORT_TTL_S + 30) * 1000, intervalMs: 1_000, what: 'the stopped provider to disappear' })
    assert.match(run.stderr, new RegExp(`dropped ${gone.peerId}: (expired|invalid|not-found)`))
    const { listed } = await ls()
    assert.deepEqual(ids(listed), providers(0, 1, 2, 3))
  })
})
