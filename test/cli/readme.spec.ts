import * as assert from 'node:assert/strict'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { BIN_PATH, tempDir, waitFor } from '../utils/index.js'

/**
 * The README cannot rot: every command line in its ```sh blocks is run here, with only
 * these substitutions: its /tmp/ig-* data directories move to a temp dir, port 4001 becomes
 * a free port, `<seed peer id>`/`<peer id>` become the seed node's peer id, a public seed
 * address becomes the local seed, and a real GPU box's nvidia-smi is the recorded fixture.
 */

interface Block { lines: string[] }

async function readmeBlocks (): Promise<Block[]> {
  const text = await readFile('README.md', 'utf8')
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map(m => ({
    lines: m[1].split('\n').map(l => l.trim()).filter(l => l !== '' && !l.startsWith('#'))
  }))
}

async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise(resolve => server.close(resolve))
  return port
}

const FAKE_SMI = join(process.cwd(), 'test/fixtures/nvidia-smi/fake-nvidia-smi.sh')

describe('README commands', function () {
  this.timeout(180_000)
  let dir: Awaited<ReturnType<typeof tempDir>>
  const children: ChildProcess[] = []
  let port: number
  let seedId = ''

  before(async () => {
    dir = await tempDir()
    port = await freePort()
  })

  after(async () => {
    await Promise.all(children.map(async c => {
      if (c.exitCode != null || c.signalCode != null) return
      c.kill('SIGTERM')
      await new Promise(resolve => c.once('exit', resolve))
    }))
    await dir.cleanup()
  })

  function localize (line: string): string[] {
    const text = line
      .replace(/\/tmp\/ig-/g, `${dir.path}/ig-`)
      // the seed's public address first: after the port rule it no longer matches
      .replace(/\/dns4\/seed\.example\.org\/tcp\/4001/g, `/ip4/127.0.0.1/tcp/${port}`)
      .replace(/\/tcp\/4001/g, `/tcp/${port}`)
      .replace(/<(seed )?peer id>/g, seedId)
    const args = text.split(/\s+/)
    assert.equal(args[0], './idlegrid', `a README command line starts with ./idlegrid: ${line}`)
    return args.slice(1)
  }

  /** Starts a long-running role from a README line and waits for its JSON ready line. */
  async function startRole (args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ peerId: string }> {
    const child = spawn(process.execPath, [BIN_PATH, ...args, '--json'], { env: { ...process.env, IDLEGRID_BOOTSTRAP: '', IDLEGRID_DATA_DIR: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    children.push(child)
    let stderr = ''
    child.stderr?.setEncoding('utf8').on('data', (d: string) => { stderr += d })
    return await new Promise((resolve, reject) => {
      let buffer = ''
      child.stdout?.setEncoding('utf8').on('data', (d: string) => {
        buffer += d
        const line = buffer.split('\n')[0]
        if (buffer.includes('\n')) resolve(JSON.parse(line))
      })
      child.once('exit', code => { reject(new Error(`${args.join(' ')} exited ${String(code)}: ${stderr}`)) })
    })
  }

  async function runOnce (args: string[]): Promise<{ code: number | null, stdout: string, stderr: string }> {
    return await new Promise(resolve => {
      execFile(process.execPath, [BIN_PATH, ...args], { timeout: 120_000, cwd: process.cwd(), env: { ...process.env, IDLEGRID_BOOTSTRAP: '', IDLEGRID_DATA_DIR: '' } }, (err, stdout, stderr) => {
        resolve({ code: err == null ? 0 : (typeof err.code === 'number' ? err.code : null), stdout, stderr })
      })
    })
  }

  it('shows exactly two commands after cloning: install + demo, and the tests, both npm scripts CI uses', async () => {
    const blocks = await readmeBlocks()
    assert.deepEqual(blocks[0].lines, ['npm install && npm run demo'])
    assert.deepEqual(blocks[1].lines, ['npm test'])
    const pkg = JSON.parse(await readFile('package.json', 'utf8'))
    assert.match(pkg.scripts.demo, /bin\.js demo$/, 'npm run demo runs idlegrid demo (tested by test/demo/demo.e2e.spec.ts)')
    assert.ok(pkg.scripts.test.startsWith('mocha'), 'npm test runs this suite')
    assert.match(await readFile('.ci/run', 'utf8'), /npm ci[^\n]*\n[\s\S]*npm test/, '.ci/run installs from the lockfile and runs the same test command')
  })

  it('runs the three roles and every one-shot command as written', async () => {
    const blocks = await readmeBlocks()
    const roles = blocks[2].lines
    const oneShots = blocks[3].lines
    const providerBlock = blocks[5].lines
    assert.equal(roles.length, 3)
    assert.ok(roles.every(l => /^\.\/idlegrid (bootstrap|provider|renter) /.test(l)))

    const seed = await startRole(localize(roles[0]))
    seedId = seed.peerId
    await startRole(localize(roles[1]))
    await startRole(localize(roles[2]))

    for (const line of oneShots) {
      const args = localize(line)
      let result = await runOnce(args)
      // the renter may need a moment to find the provider's record and mesh with it: retried,
      // bounded; the assertion below reports the last try
      if (result.code !== 0 && /market ls|submit/.test(line)) {
        await waitFor(async () => (result = await runOnce(args)).code === 0, {
          timeoutMs: 60_000,
          intervalMs: 2_000,
          what: line
        }).catch(() => {})
      }
      assert.equal(result.code, 0, `${line}\nstdout: ${result.stdout.slice(-1500)}\nstderr: ${result.stderr.slice(-1500)}`)
      if (line.includes('market ls')) assert.match(result.stdout, /h100/i, 'the provider shows up in market ls')
      if (line.includes('submit')) {
        assert.match(result.stdout, /verified/, 'submit reports the verified attestation')
        assert.doesNotMatch(result.stdout, /NOT verified/, 'submit reports an attestation that did not verify')
      }
    }

    // a real GPU box's provider, with the config example; nvidia-smi is the recorded H100 fixture
    assert.equal(providerBlock.length, 1)
    const gpuBox = await startRole([
      ...localize(providerBlock[0]),
      '--nvidia-smi', FAKE_SMI, '--data-dir', join(dir.path, 'ig-gpu-box'), '--listen', '/ip4/127.0.0.1/tcp/0'
    ], { FAKE_NVIDIA_SMI_FIXTURE: 'h100-80gb' })
    assert.match(gpuBox.peerId, /^12D3KooW/)
  })

  it('goes from nothing to a running provider with the three commands that start the provider section', async () => {
    const lines = (await readmeBlocks())[4].lines
    assert.deepEqual(lines.map(l => l.split(' ').slice(0, 2).join(' ')), ['./idlegrid init', './idlegrid doctor', './idlegrid provider'])
    assert.ok(seedId !== '', 'the seed of the roles test is running')
    const smi = ['--nvidia-smi', FAKE_SMI]
    const env = { FAKE_NVIDIA_SMI_FIXTURE: 'h100-80gb' }
    process.env.FAKE_NVIDIA_SMI_FIXTURE = env.FAKE_NVIDIA_SMI_FIXTURE
    try {
      const init = await runOnce([...localize(lines[0]), ...smi])
      assert.equal(init.code, 0, init.stderr)
      // this machine may have no Docker engine: doctor's report is read, and only the docker checks may fail
      const doctor = await runOnce([...localize(lines[1]), ...smi, '--listen', '/ip4/127.0.0.1/tcp/0', '--json'])
      const report = JSON.parse(doctor.stdout)
      const failed = report.checks.filter((c: { status: string }) => c.status === 'fail').map((c: { id: string }) => c.id)
      assert.deepEqual(failed.filter((id: string) => !id.startsWith('docker')), [], doctor.stdout)
      assert.ok(report.checks.some((c: { id: string, status: string }) => c.id.startsWith('bootstrap /') && c.status === 'ok'), 'the seed is reachable')
      assert.ok(report.checks.some((c: { id: string }) => c.id === 'clock'))
    } finally {
      delete process.env.FAKE_NVIDIA_SMI_FIXTURE
    }
    const provider = await startRole([...localize(lines[2]), ...smi, '--listen', '/ip4/127.0.0.1/tcp/0'], env)
    assert.match(provider.peerId, /^12D3KooW/)
  })

  it('runs the provider earnings command from the provider section', async () => {
    const text = await readFile('README.md', 'utf8')
    const earnings = /`(\.\/idlegrid ledger earnings --data-dir DIR)`/.exec(text)
    assert.ok(earnings != null)
    const args = localize(earnings[1].replace('DIR', '/tmp/ig-provider'))
    const result = await runOnce(args)
    assert.equal(result.code, 0, result.stderr)
  })
})
