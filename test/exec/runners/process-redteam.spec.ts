/**
 * Red team, issue 13 attack 6: a renter's job on a provider that uses the process runner tries
 * to take the provider's identity and reach past its job. Real nodes in this process built by
 * the CLI's composition root (default work root, default job user), the provider's real data
 * dir with its node key and control socket, real jobs over the job stream.
 */
import { strict as assert } from 'node:assert'
import { chmod, readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { loadProviderSetup } from '../../../src/capability/index.js'
import { roleExtensions } from '../../../src/compose/index.js'
import { serveControl } from '../../../src/cli/node-control.js'
import { defaultWorkRoot } from '../../../src/exec/runners/index.js'
import { runAttempt, type JobEvent, type JobPayload } from '../../../src/exec/renter/attempt.js'
import { otherUser, recordAttack, startInProcessNetwork, tempDir, waitFor, type InProcessNetwork } from '../../utils/index.js'
import { execOf, makeAward } from '../fixtures.js'
import { ESCAPES, running } from './process-fixtures.js'
import type { ControlServer } from '../../../src/control/index.js'
import type { IdlegridNode } from '../../../src/node/index.js'

/** What the attacking job tries; each result lands in its own output file (empty: it got nothing). */
const ATTACK = [
  'exec 2>/dev/null',
  'cat "$DATA/node.key" > outputs/key-abs',
  'cp ../../node.key outputs/key-rel',
  'cat /proc/$PPID/environ > outputs/ppid-environ',
  'ls -A .. > outputs/ls-workroot',
  'ls -A "$DATA" > outputs/ls-data',
  'if [ -e "$DATA/control.sock" ]; then echo reachable; else echo unreachable; fi > outputs/sock',
  'cat /proc/[0-9]*/cwd/inputs/secret.txt > outputs/stolen',
  ESCAPES
].join('\n')

describe('exec: red team: a process job against its provider (issue 13 attack 6)', function () {
  this.timeout(120_000)
  let net: InProcessNetwork
  let tmp: { path: string, cleanup: () => Promise<void> }
  const controls: ControlServer[] = []
  let skipWhy: string | undefined

  before(async function () {
    const user = await otherUser()
    if (typeof user === 'string') { skipWhy = user; return }
    tmp = await tempDir('idlegrid-redteam-process-')
    await writeFile(join(tmp.path, 'secret.txt'), 'victim data')
    await writeFile(join(tmp.path, 'empty.txt'), '')
    const { profile } = await loadProviderSetup({ raw: {}, flags: { region: 'eu-west', 'price-floor': '1.00' }, simulateGpu: ['H100:80:2'] })
    // provider 0: one job uid shared by all jobs (--job-user nobody); provider 1: the default, one uid per running job
    net = await startInProcessNetwork({
      providers: 2,
      renters: 2,
      extensions: (role, i, config) => role === 'provider' ? roleExtensions(config, { provider: { profile, runner: 'process', jobUser: i === 0 ? 'nobody' : undefined } }) : {}
    })
    // the data dir's own permissions (0700, key 0600) must be what stops the job: its parent lets anyone through
    for (const p of net.providers) {
      await chmod(dirname(p.config.dataDir), 0o711)
      controls.push(await serveControl(p))
    }
    for (const r of net.renters) for (const p of net.providers) await r.libp2p.dial(p.libp2p.getMultiaddrs()[0] as any)
  })

  after(async () => {
    for (const c of controls) await c.close()
    if (net != null) {
      for (const p of net.providers) await rm(defaultWorkRoot(p.config.dataDir), { recursive: true, force: true })
    }
    await net?.stop()
    await tmp?.cleanup()
  })

  /** Runs `payload` from renter `r` on `provider` (the award accepted as the market would), outputs under `name`. */
  const run = async (
    provider: IdlegridNode,
    r: number,
    name: string,
    payload: JobPayload,
    onLog?: (line: string) => void
  ): ReturnType<typeof runAttempt> => {
    const renter = net.renters[r] as IdlegridNode
    const awarded = makeAward(renter, provider.peerId)
    execOf(provider).noteAccepted(awarded.award)
    const onEvent = (e: JobEvent): void => { if (e.type === 'log') onLog?.(e.line) }
    return await runAttempt(awarded, payload, {
      libp2p: renter.libp2p,
      privateKey: renter.privateKey,
      peerId: renter.peerId,
      dir: join(tmp.path, name),
      idleMs: 10_000,
      onEvent
    })
  }

  const out = async (name: string, file: string): Promise<string> => await readFile(join(tmp.path, name, 'outputs', file), 'utf8').catch(() => '')

  for (const [index, who] of [[0, 'nobody, shared by jobs (--job-user nobody)'], [1, 'the default: one uid per running job']] as const) {
    it(`red team: key theft, environ, data dir, control socket, setsid escape and a concurrent job's files (job user: ${who})`, async function () {
      if (skipWhy != null) { console.log(`      skipped: ${skipWhy}`); this.skip() }
      const provider = net.providers[index] as IdlegridNode
      const data = provider.config.dataDir
      // the victim: another renter's job with a secret input, running while the attack runs
      const started: string[] = []
      const victim = run(provider, 0, `victim-${index}`, {
        runtime: { command: ['/bin/sh', '-c', 'echo up; sleep 4'], timeoutMs: 30_000 },
        inputs: [{ path: 'secret.txt', file: join(tmp.path, 'secret.txt') }]
      }, line => started.push(line))
      await waitFor(() => started.includes('up'), { timeoutMs: 30_000, what: 'the victim job to run' })
      const name = `attack-${index}`
      const attack = await run(provider, 1, name, {
        runtime: { command: ['/bin/sh', '-c', ATTACK], env: { DATA: data }, timeoutMs: 30_000 },
        inputs: [{ path: 'empty.txt', file: join(tmp.path, 'empty.txt') }]
      })
      assert.equal(attack.outcome, 'ok', attack.detail)
      assert.equal((await victim).outcome, 'ok')
      const key = await readFile(join(data, 'node.key'))
      const got = {
        keyAbs: Buffer.byteLength(await out(name, 'key-abs')),
        keyRel: Buffer.byteLength(await out(name, 'key-rel')),
        environ: Buffer.byteLength(await out(name, 'ppid-environ')),
        workRoot: (await out(name, 'ls-workroot')).split('\n').filter(Boolean).length,
        dataDir: (await out(name, 'ls-data')).split('\n').filter(Boolean).length,
        sock: (await out(name, 'sock')).trim(),
        stolen: await out(name, 'stolen')
      }
      const pids = await Promise.all(['setsid.pid', 'daemon.pid'].map(async f => Number((await out(name, f)).trim())))
      const alive = pids.filter(pid => pid > 0 && running(pid)).length
      const limit = `jobs as ${who}; work root ${dirname(join(defaultWorkRoot(data), 'x'))} (0711) outside the data dir (0700, key 0600)`
      recordAttack({ issue: '13.6', attack: 'job reads the node key ($DATA/node.key, ../../node.key)', got: `${got.keyAbs} + ${got.keyRel} bytes of a ${key.length}-byte key`, limit })
      recordAttack({ issue: '13.6', attack: 'job reads the provider\'s /proc/$PPID/environ', got: `${got.environ} bytes`, limit: `jobs as ${who}` })
      recordAttack({ issue: '13.6', attack: 'job lists the work root and the data dir', got: `${got.workRoot} work-root entries, ${got.dataDir} data-dir entries`, limit: 'work root 0711, data dir 0700' })
      recordAttack({ issue: '13.6', attack: 'job reaches the control socket', got: got.sock, limit: 'data dir 0700' })
      recordAttack({ issue: '13.6', attack: `job reads a concurrent job's input via /proc/PID/cwd (${who})`, got: got.stolen === '' ? 'nothing' : `"${got.stolen}"`, limit: index === 1 ? 'one uid per running job (the default as root)' : 'none: a shared job uid (--job-user nobody); the default gives each job its own' })
      recordAttack({ issue: '13.6', attack: 'setsid sleep and a double-forked daemon outlive the job', got: `${alive} of ${pids.filter(p => p > 0).length} alive after the job`, limit: 'a cgroup per job (cgroup.kill), else a /proc scan' })
      assert.deepEqual({ keyAbs: got.keyAbs, keyRel: got.keyRel, environ: got.environ, workRoot: got.workRoot, dataDir: got.dataDir, sock: got.sock }, { keyAbs: 0, keyRel: 0, environ: 0, workRoot: 0, dataDir: 0, sock: 'unreachable' })
      assert.equal(pids.filter(p => p > 0).length, 2, 'the job started both escapes')
      assert.equal(alive, 0)
      if (index === 1) assert.equal(got.stolen, '', 'a job with its own uid cannot read another job\'s files')
      // honest service continues: the provider still runs a plain job
      const after = await run(provider, 1, `after-${index}`, { runtime: { command: ['/bin/sh', '-c', 'echo fine > outputs/ok.txt'], timeoutMs: 10_000 }, inputs: [] })
      assert.equal(after.outcome, 'ok', after.detail)
      assert.equal(await out(`after-${index}`, 'ok.txt'), 'fine\n')
    })
  }
})
