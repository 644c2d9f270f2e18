/** `--metrics` and `--dashboard` on a role command, as an operator runs it (issue 18 items 1, 2). */
import * as assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { observeSettings } from '../../src/observe/index.js'
import { BIN_PATH, tempDir } from '../utils/index.js'

describe('observe: the role commands\' --metrics and --dashboard', function () {
  this.timeout(60_000)

  it('a renter prints where its metrics and dashboard are; the dashboard wants the data dir\'s token', async () => {
    const dir = await tempDir('idlegrid-observe-cli-')
    const child = spawn(process.execPath, [BIN_PATH, 'renter', '--json', '--data-dir', join(dir.path, 'r'), '--listen', '/ip4/127.0.0.1/tcp/0', '--metrics', '127.0.0.1:0', '--dashboard', '0'], { env: { ...process.env, IDLEGRID_BOOTSTRAP: '' }, stdio: ['ignore', 'pipe', 'pipe'] })
    try {
      const observe = await new Promise<{ metrics: string, dashboard: string, tokenFile?: string }>(
        (resolve, reject) => {
          let buffer = ''
          child.once('exit', (code) => { reject(new Error(`renter exited ${String(code)}`)) })
          child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
            buffer += chunk
            for (const line of buffer.split('\n').slice(0, -1)) {
              const value = JSON.parse(line)
              if (value.event === 'observe') resolve(value)
            }
            buffer = buffer.slice(buffer.lastIndexOf('\n') + 1)
          })
        }
      )
      assert.match(observe.metrics, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
      const token = (await readFile(join(dir.path, 'r', 'dashboard.token'), 'utf8')).trim()
      assert.match(observe.dashboard, /^http:\/\/127\.0\.0\.1:\d+\/$/, 'a bare port listens on 127.0.0.1, and the URL holds no token')
      assert.equal(observe.tokenFile, join(dir.path, 'r', 'dashboard.token'))
      assert.ok(!JSON.stringify(observe).includes(token), 'the token is printed nowhere')
      const text = await (await fetch(observe.metrics)).text()
      assert.match(text, /^# TYPE idlegrid_auctions_total counter$/m)
      assert.match(text, /^idlegrid_peers_connected 0$/m)
      assert.match(text, /^# TYPE libp2p_/m, 'libp2p\'s own metrics')
      const base = new URL(observe.dashboard).origin
      assert.equal((await fetch(`${base}/api/overview`)).status, 401)
      const overview = await (await fetch(`${base}/api/overview`, { headers: { authorization: `Bearer ${token}` } })).json() as { role: string }
      assert.equal(overview.role, 'renter')
    } finally {
      child.kill('SIGTERM')
      await new Promise(resolve => child.once('exit', resolve))
      await dir.cleanup()
    }
  })

  it('a bad address is refused before the node starts, naming the flag', () => {
    assert.throws(() => observeSettings({ dashboard: 'nowhere:' }), /--dashboard takes HOST:PORT/)
    assert.deepEqual(observeSettings({}), { metrics: undefined, dashboard: undefined }, 'both off by default')
  })
})
