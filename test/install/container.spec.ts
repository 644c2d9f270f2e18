import * as assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createServer } from 'node:net'
import { roleExtensions } from '../../src/compose/index.js'
import { DISCOVERY_SERVICE } from '../../src/capability/index.js'
import type { DiscoveryResult } from '../../src/capability/index.js'
import { startInProcessNetwork, tempDir, waitFor, type InProcessNetwork } from '../utils/index.js'

/** The base the image is built on: CI makes it with scripts/base-image.sh (debootstrap + docker import). */
const BASE = process.env.IDLEGRID_TEST_BASE_IMAGE ?? 'idlegrid-base:bookworm'
const IMAGE = 'idlegrid-test:ci'

async function sh (
  cmd: string,
  args: string[],
  timeoutMs = 300_000,
  env?: NodeJS.ProcessEnv
): Promise<{ code: number, stdout: string, stderr: string }> {
  return await new Promise(resolve => {
    execFile(cmd, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, env }, (err, stdout, stderr) => {
      resolve({ code: err == null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr })
    })
  })
}

/**
 * A port the kernel just gave out on every interface (compose publishes there; a race with another
 * listener is unlikely).
 */
async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, () => {
      const address = server.address()
      server.close(() => { typeof address === 'object' && address != null ? resolve(address.port) : reject(new Error('no port')) })
    })
  })
}

/**
 * The image builds from the registry-free context and a provider in a container joins a
 * network of in-process nodes: a renter finds its signed capability record in the DHT. The
 * private engine CI starts has no bridge network, so the container shares the host's.
 */
describe('install: the Docker image', function () {
  this.timeout(600_000)
  let net: InProcessNetwork | undefined
  let container = ''

  before(async function () {
    const engine = await sh('docker', ['version', '--format', '{{.Server.Version}}'], 15_000)
    if (engine.code !== 0) {
      console.log(`      skipped: no Docker engine answers (${engine.stderr.trim().split('\n')[0]}); .ci/run starts one with scripts/docker-engine.sh`)
      this.skip()
    }
    if ((await sh('docker', ['image', 'inspect', BASE], 15_000)).code !== 0) {
      console.log(`      skipped: no base image ${BASE}; make it with scripts/base-image.sh (debootstrap), as .ci/run does`)
      this.skip()
    }
  })

  let compose: ((...args: string[]) => ReturnType<typeof sh>) | undefined
  after(async () => {
    if (container !== '') await sh('docker', ['rm', '-f', '-v', container], 30_000)
    await net?.stop()
    // the compose project's containers, network and volumes
    if (compose != null) await compose('down', '--volumes', '--timeout', '5')
  })

  it('builds, and a container provider joins an in-process network (its capability record is found)', async () => {
    const ctx = await tempDir()
    try {
      const made = await sh('scripts/docker-context.sh', [`${ctx.path}/context`])
      assert.equal(made.code, 0, made.stderr)
      const build = await sh('docker', ['build', '-q', '--build-arg', `BASE=${BASE}`, '-t', IMAGE, `${ctx.path}/context`])
      assert.equal(build.code, 0, build.stderr.slice(-2000))
    } finally {
      await ctx.cleanup()
    }
    const user = await sh('docker', ['run', '--rm', '--entrypoint', '/usr/bin/id', IMAGE, '-u'], 60_000)
    assert.equal(user.stdout.trim(), '10001', 'the node runs as a non-root user')

    net = await startInProcessNetwork({
      providers: 0,
      renters: 1,
      extensions: (_role, _i, config) => roleExtensions(config)
    })
    const seed = net.bootstrap.libp2p.getMultiaddrs()[0].toString()
    const run = await sh('docker', ['run', '-d', '--network', 'host', IMAGE, 'provider', '--simulate-gpu', 'H100:80', '--region', 'eu-west',
      '--price-floor', '1.5', '--runner', 'process', '--bootstrap', seed, '--listen', '/ip4/127.0.0.1/tcp/0', '--private-addresses', 'true',
      '--heartbeat-seconds', '1', '--json'], 60_000)
    assert.equal(run.code, 0, run.stderr)
    container = run.stdout.trim()
    const ready = await waitFor(async () => {
      const logs = await sh('docker', ['logs', container], 15_000)
      const line = logs.stdout.split('\n').find(l => l.startsWith('{"peerId"'))
      if (line == null && /exited|Exited/.test((await sh('docker', ['ps', '-a', '--filter', `id=${container}`, '--format', '{{.Status}}'], 15_000)).stdout)) {
        throw new Error(`the provider container stopped: ${logs.stderr.slice(-1500)}`)
      }
      return line
    }, { timeoutMs: 60_000, intervalMs: 500, what: 'the container provider\'s ready line' })
    const peerId: string = JSON.parse(ready).peerId
    const renter = net.renters[0]
    const found = await waitFor(async () => {
      const result: DiscoveryResult = await (renter.libp2p.services as any)[DISCOVERY_SERVICE].discover({ gpus: ['h100'] }, { timeoutMs: 5_000 })
      return result.providers.find(p => p.peerId === peerId)
    }, { timeoutMs: 90_000, intervalMs: 1_000, what: 'the container provider\'s capability record' })
    assert.equal(found.region, 'eu-west')
    assert.equal(found.priceFloor, 1.5)
  })

  it('deploy/compose.yaml brings up a seed, a provider and a renter on the built image, and the renter finds the provider', async function () {
    if ((await sh('docker-compose', ['version'], 15_000)).code !== 0) {
      console.log('      skipped: no docker-compose (Debian\'s docker-compose package; .ci/run installs it)')
      this.skip()
    }
    // a project of its own, the image built above, simulated GPUs (no compose.gpu.yaml), host ports the kernel gave out
    const env = {
      ...process.env,
      IDLEGRID_IMAGE: IMAGE,
      IDLEGRID_INIT_ARGS: '--simulate-gpu H100:80 --region eu-west',
      IDLEGRID_SEED_PORT: String(await freePort()),
      IDLEGRID_SEED_WS_PORT: String(await freePort()),
      IDLEGRID_PROVIDER_PORT: String(await freePort()),
      IDLEGRID_DASHBOARD_PORT: String(await freePort())
    }
    const run = compose = async (...args: string[]) => await sh('docker-compose', ['--project-name', `igcompose${process.pid}`, '--file', 'deploy/compose.yaml', ...args], 120_000, env)
    const up = await run('up', '--detach')
    assert.equal(up.code, 0, up.stderr.slice(-2000))
    // the provider's peer id from its "is running" line (it wrote its config with init first); the renter's
    // dashboard line names the file its token is in (the token itself is never printed): read it in the container
    const { providerId, tokenFile } = await waitFor(async () => {
      const logs = await run('logs', '--no-color', 'provider', 'renter')
      const id = /idlegrid provider (\S+) is running/.exec(logs.stdout)?.[1]
      const file = /dashboard: http:\/\/\S+\/ +\(sign in with the token in (\S+)\)/.exec(logs.stdout)?.[1]
      if (id == null || file == null) {
        const ps = await run('ps')
        if (/\bExit\b|Restarting/.test(ps.stdout)) throw new Error(`a node stopped:\n${ps.stdout}\n${logs.stdout.slice(-1500)}`)
        return undefined
      }
      assert.ok(!/[0-9a-f]{64}/.test(logs.stdout.split('\n').filter(l => l.includes('dashboard')).join('\n')), 'no token in the logs')
      return { providerId: id, tokenFile: file }
    }, { timeoutMs: 90_000, intervalMs: 500, what: 'the provider and the renter running in compose' })
    const read = await run('exec', '-T', 'renter', 'cat', tokenFile)
    assert.equal(read.code, 0, read.stderr)
    const token = read.stdout.trim()
    assert.match(token, /^[0-9a-f]{64}$/)
    // the renter's dashboard, published on the host's 127.0.0.1, lists the provider's capability
    // record as the renter found it in the DHT
    const found = await waitFor(async () => {
      const res = await fetch(`http://127.0.0.1:${env.IDLEGRID_DASHBOARD_PORT}/api/market`, { headers: { authorization: `Bearer ${token}` } }).catch(() => undefined)
      if (res?.status !== 200) return undefined
      const market = await res.json() as { providers: Array<{ peerId: string, region: string, simulated: boolean }> }
      return market.providers.find(p => p.peerId === providerId)
    }, { timeoutMs: 60_000, intervalMs: 1_000, what: 'the compose provider on the compose renter\'s dashboard' })
    assert.equal(found.region, 'eu-west', 'the provider runs the config init wrote from IDLEGRID_INIT_ARGS')
    assert.equal(found.simulated, true)
    const down = await run('down', '--volumes', '--timeout', '5')
    assert.equal(down.code, 0, down.stderr.slice(-2000))
    compose = undefined
  })
})
