import * as assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { loadProviderSetup } from '../../src/capability/index.js'
import { readConfigFile, resolveConfig } from '../../src/config/index.js'
import { priceFloorFor, proposeProvider, regionFor } from '../../src/setup/index.js'
import { parseSimulatedGpus } from '../../src/capability/index.js'
import { PassThrough } from 'node:stream'
import { initCommand } from '../../src/cli/commands/init.js'
import { UsageError } from '../../src/cli/errors.js'
import { parseCommand } from '../../src/cli/options.js'
import { createOutput } from '../../src/cli/output.js'
import { ConfigError } from '../../src/config/index.js'
import { BIN_PATH, tempDir } from '../utils/index.js'
import { fakeTool, NVIDIA_SMI_2X_H100 } from './fake-tools.js'

async function idlegrid (args: string[]): Promise<{ code: number, stdout: string, stderr: string }> {
  return await new Promise(resolve => {
    execFile(process.execPath, [BIN_PATH, ...args], { env: { ...process.env, IDLEGRID_BOOTSTRAP: '', IDLEGRID_DATA_DIR: '', TZ: 'Europe/Berlin' }, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err == null ? 0 : Number(err.code), stdout, stderr })
    })
  })
}

/** The command in this process (no CLI start-up: seconds each on a loaded machine), with main's exit codes. */
async function initHere (args: string[]): Promise<{ code: number, stderr: string }> {
  const sink = new PassThrough()
  try {
    const { values, positionals } = parseCommand(initCommand, args)
    return { code: await initCommand.run(values, positionals, createOutput(false, sink, sink)), stderr: '' }
  } catch (err: any) {
    return {
      code: err instanceof UsageError || err instanceof ConfigError ? 2 : 1,
      stderr: String(err?.message ?? err)
    }
  }
}

describe('idlegrid init', function () {
  this.timeout(60_000)
  let dir: Awaited<ReturnType<typeof tempDir>>
  beforeEach(async () => { dir = await tempDir() })
  afterEach(async () => { await dir.cleanup() })

  it('proposes a floor from the model, tiers and windows from the kind of card, a region from the time zone', () => {
    assert.equal(priceFloorFor('h100-80gb', 81559).usd, 1.90)
    assert.equal(priceFloorFor('a100-80gb', 81920).usd, 1.10)
    assert.equal(priceFloorFor('a100-40gb', 40960).usd, 0.85)
    assert.equal(priceFloorFor('l4', 23034).usd, 0.28, 'l4 is not l40')
    assert.equal(priceFloorFor('mystery-9000', 48 * 1024).usd, 0.58, 'by VRAM when the model is unknown')
    const dc = proposeProvider(parseSimulatedGpus(['H100:80:8']), { timeZone: 'Europe/Berlin' })
    assert.deepEqual([dc.tiers, dc.windows, dc.region], [['gold', 'silver', 'bronze'], ['always'], 'eu-central'])
    const mixed = proposeProvider(parseSimulatedGpus(['H100:80', 'RTX 4090:24']), { timeZone: 'America/Los_Angeles' })
    assert.equal(mixed.priceFloor, 0.30, 'the cheapest card sets the floor')
    assert.deepEqual([mixed.tiers, mixed.region], [['silver', 'bronze'], 'us-west'])
    assert.equal(regionFor('Asia/Tokyo'), 'ap-east')
  })

  it('writes a provider config from recorded nvidia-smi output that the loader and the policy accept', async () => {
    const smi = await fakeTool(dir.path, 'nvidia-smi', { stdout: NVIDIA_SMI_2X_H100 })
    const dataDir = join(dir.path, 'data')
    const result = await idlegrid(['init', '--role', 'provider', '--data-dir', dataDir, '--nvidia-smi', smi, '--bootstrap', '/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWGRUVh9dBhLLnWMcJpBGCkbVeigx1wCq63nDgMHUPsiVL'])
    assert.equal(result.code, 0, result.stderr)
    const file = join(dataDir, 'provider.yaml')
    assert.equal((await stat(file)).mode & 0o777, 0o600)
    assert.equal((await stat(dataDir)).mode & 0o777, 0o700)
    const text = await readFile(file, 'utf8')
    assert.match(text, /^# /m, 'commented')
    const config = resolveConfig({ role: 'provider', file: await readConfigFile(file) })
    assert.equal(config.dataDir, dataDir)
    assert.equal(config.bootstrap.length, 1)
    const { profile } = await loadProviderSetup({ raw: config.provider })
    assert.equal(profile.policy.priceFloor, 1.90)
    assert.equal(profile.policy.region, 'eu-central')
    assert.equal(profile.policy.availability.timeZone, 'Europe/Berlin')
    assert.deepEqual(profile.policy.tiers, ['gold', 'silver', 'bronze'])
    assert.deepEqual(profile.groups.map(g => [g.count, g.modelKey]), [[2, 'h100-80gb']])
  })

  it('never overwrites without --force; renter and bootstrap configs load too', async () => {
    const out = join(dir.path, 'renter.yaml')
    await writeFile(out, 'mine: true\n')
    const refused = await initHere(['--role', 'renter', '--data-dir', join(dir.path, 'd'), '--output', out])
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /already exists; .*--force/)
    assert.equal(await readFile(out, 'utf8'), 'mine: true\n', 'untouched')
    assert.equal((await initHere(['--role', 'renter', '--data-dir', join(dir.path, 'd'), '--output', out, '--force'])).code, 0)
    assert.equal(resolveConfig({ role: 'renter', file: await readConfigFile(out) }).role, 'renter')
    const seed = join(dir.path, 'seed.yaml')
    assert.equal((await initHere(['--role', 'bootstrap', '--data-dir', join(dir.path, 'd'), '--output', seed])).code, 0)
    assert.equal(resolveConfig({ role: 'bootstrap', file: await readConfigFile(seed) }).privateAddresses, false)
  })

  it('refuses a provider without GPUs, a bad role and a bad bootstrap address, writing nothing', async () => {
    const noGpu = await initHere(['--role', 'provider', '--data-dir', join(dir.path, 'a'), '--nvidia-smi', join(dir.path, 'none')])
    assert.equal(noGpu.code, 1)
    assert.match(noGpu.stderr, /nvidia-smi not found.*--simulate-gpu/)
    assert.equal((await initHere(['--role', 'miner', '--data-dir', join(dir.path, 'b')])).code, 2)
    const badPeer = await initHere(['--role', 'renter', '--data-dir', join(dir.path, 'c'), '--bootstrap', '/ip4/1.2.3.4/tcp/4001'])
    assert.equal(badPeer.code, 2)
    assert.match(badPeer.stderr, /bootstrap\[0\].*\/p2p\//)
    await assert.rejects(stat(join(dir.path, 'c', 'renter.yaml')))
  })
})
