import * as assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { resolveConfig } from '../../src/config/index.js'
import { checkNetwork, judgeSkew } from '../../src/doctor/network-checks.js'
import { BIN_PATH, startInProcessNetwork, tempDir, type InProcessNetwork } from '../utils/index.js'
import { fakeTool, NVIDIA_SMI_2X_H100 } from './fake-tools.js'

function renterConfig (dataDir: string, bootstrap: string[]): ReturnType<typeof resolveConfig> {
  return resolveConfig({ role: 'renter', flags: { dataDir, bootstrap, listen: ['/ip4/127.0.0.1/tcp/0'] } })
}

describe('idlegrid doctor: network checks and the command', function () {
  this.timeout(60_000)
  let dir: Awaited<ReturnType<typeof tempDir>>
  beforeEach(async () => { dir = await tempDir() })
  afterEach(async () => { await dir.cleanup() })

  it('a reachable bootstrap peer passes with its round trip, and the clock is compared with its heartbeats', async () => {
    const net: InProcessNetwork = await startInProcessNetwork({ providers: 0, renters: 0, heartbeatSeconds: 1 })
    try {
      const addr = net.bootstrap.libp2p.getMultiaddrs()[0].toString()
      const results = await checkNetwork(renterConfig(dir.path, [addr]), { waitMs: 15_000 })
      assert.deepEqual(results.map(r => [r.id, r.status]), [[`bootstrap ${addr}`, 'ok'], ['clock', 'ok']], JSON.stringify(results))
      assert.match(results[0].detail, /round trip \d+ ms/)
      assert.match(results[1].detail, /median of 1 peer/)
    } finally {
      await net.stop()
    }
  })

  it('an unreachable bootstrap peer fails with the fix, and the clock is not measured', async () => {
    const peerId = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString()
    const addr = `/ip4/127.0.0.1/tcp/9/p2p/${peerId}`
    const results = await checkNetwork(renterConfig(dir.path, [addr]), { waitMs: 1_000, dialTimeoutMs: 3_000 })
    assert.deepEqual(results.map(r => [r.id, r.status]), [[`bootstrap ${addr}`, 'fail'], ['clock', 'warn']])
    assert.match(results[0].fix ?? '', /firewall/)
  })

  it('no bootstrap peers: a warning for a renter, fine for a seed', async () => {
    assert.deepEqual((await checkNetwork(renterConfig(dir.path, []))).map(r => r.status), ['warn'])
    const seed = resolveConfig({ role: 'bootstrap', flags: { dataDir: dir.path, bootstrap: [] } })
    assert.deepEqual((await checkNetwork(seed)).map(r => r.status), ['ok'])
  })

  it('clock: the median offset decides; one peer lying about its time does not fail the check', () => {
    assert.equal(judgeSkew([{ peerId: 'a', skewMs: -40 }]).status, 'ok')
    assert.equal(judgeSkew([{ peerId: 'a', skewMs: 5_000 }]).status, 'warn')
    const far = judgeSkew([{ peerId: 'a', skewMs: -25_000 }, { peerId: 'b', skewMs: -24_000 }, { peerId: 'c', skewMs: -26_000 }])
    assert.equal(far.status, 'fail')
    assert.match(far.detail, /25\.0 s ahead of the median of 3 peers/)
    assert.match(far.fix ?? '', /timedatectl set-ntp true/)
    assert.equal(judgeSkew([{ peerId: 'a', skewMs: 10 }, { peerId: 'b', skewMs: -20 }, { peerId: 'liar', skewMs: 29_000 }]).status, 'ok')
  })

  it('the command: exit 1 and JSON naming each failed check; exit 0 when everything passes', async () => {
    const run = async (args: string[]): Promise<{ code: number, stdout: string }> => await new Promise(resolve => {
      execFile(process.execPath, [BIN_PATH, 'doctor', ...args], { env: { ...process.env, IDLEGRID_BOOTSTRAP: '', IDLEGRID_DATA_DIR: '' }, timeout: 30_000 }, (err, stdout) => {
        resolve({ code: err == null ? 0 : Number(err.code), stdout })
      })
    })
    const smi = await fakeTool(dir.path, 'nvidia-smi', { stdout: NVIDIA_SMI_2X_H100 })
    const bad = await run(['--role', 'provider', '--nvidia-smi', `${dir.path}/missing-smi`, '--runner', 'process', '--data-dir', `${dir.path}/data`, '--offline', '--json'])
    assert.equal(bad.code, 1)
    const report = JSON.parse(bad.stdout)
    assert.equal(report.ok, false)
    assert.deepEqual(report.checks.filter((c: any) => c.status === 'fail').map((c: any) => c.id), ['gpu'])
    const good = await run(['--role', 'provider', '--nvidia-smi', smi, '--runner', 'process', '--data-dir', `${dir.path}/data`, '--offline'])
    assert.equal(good.code, 0, good.stdout)
    assert.match(good.stdout, /^ok {4}gpu: 2x NVIDIA H100 80GB HBM3/m)
    assert.match(good.stdout, /^ready/m)
  })
})
