/**
 * Multi-process end to end: a bootstrap, three providers (process runner, simulated GPUs) and
 * a renter, each its own `idlegrid` process on 127.0.0.1; jobs submitted with
 * `idlegrid submit JOB.yaml --json` against the renter node.
 */
import { strict as assert } from 'node:assert'
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { callControl } from '../../src/control/index.js'
import { startLocalNetwork, waitForMesh, type LocalNetwork, type NodeProcess } from '../utils/index.js'
import { submitJob, type Submitted } from './fixtures.js'
import { BIN_PATH, tempDir, waitFor } from '../utils/index.js'

/** `idlegrid ARGS` as a real process, bounded in time. */
async function cli (args: string[]): Promise<{ code: number | null, stdout: string, stderr: string }> {
  return await new Promise(resolve => {
    execFile(process.execPath, [BIN_PATH, ...args], { timeout: 45_000, killSignal: 'SIGKILL', env: { ...process.env, IDLEGRID_BOOTSTRAP: '', IDLEGRID_DATA_DIR: '' } }, (err, stdout, stderr) => {
      resolve({ code: err == null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr })
    })
  })
}

async function submit (renter: NodeProcess, cwd: string, jobFile: string, extra: string[] = []): Promise<Submitted> {
  return await submitJob(renter.dataDir, cwd, jobFile, extra)
}

async function runningOn (providers: NodeProcess[], name: string): Promise<NodeProcess | undefined> {
  for (const p of providers) {
    if (p.child.exitCode != null || p.child.signalCode != null) continue
    const view = await callControl(p.dataDir, 'exec.jobs', {}, { timeoutMs: 5_000 }).catch(() => undefined) as { jobs: Array<{ state: string, jobId: string }> } | undefined
    if (view?.jobs.some(j => j.state === 'running' && j.jobId.length > 0 && name.length > 0)) return p
  }
  return undefined
}

describe('exec: multi-process end to end', function () {
  this.timeout(300_000)
  let net: LocalNetwork
  let tmp: { path: string, cleanup: () => Promise<void> }

  before(async () => {
    tmp = await tempDir('idlegrid-exec-e2e-')
    // P1 takes every tier and is cheapest; P2 and P3 take silver and bronze only
    net = await startLocalNetwork({
      baseDir: tmp.path,
      providers: 3,
      renters: 1,
      providerArgs: (i) => ['--runner', 'process', '--simulate-gpu', 'H100:80', '--region', 'eu-west', '--price-floor', String(1 + i), '--grace', '2', ...(i === 0 ? [] : ['--tiers', 'silver,bronze'])]
    })
    const view = await waitForMesh(net.all, 120_000)
    assert.ok(view.complete, view.missing.join('\n'))
    await writeFile(join(tmp.path, 'words.txt'), 'hello idlegrid\n')
    const job = (name: string, tier: string, script: string, minutes = 1): string => [
      `name: ${name}`, `tier: ${tier}`, 'workload: evaluation',
      'runtime:', `  command: [/bin/sh, -c, ${JSON.stringify(script)}]`,
      'inputs: [words.txt]', `estimatedMinutes: ${minutes}`,
      'auction:', '  bidWindowMs: 700', '  acceptTimeoutMs: 3000'
    ].join('\n') + '\n'
    await writeFile(join(tmp.path, 'upper.yaml'), job('upper', 'silver', 'tr a-z A-Z < inputs/words.txt > outputs/upper.txt && echo done'))
    await writeFile(join(tmp.path, 'slow.yaml'), job('slow', 'silver', 'echo start; sleep 6; tr a-z A-Z < inputs/words.txt > outputs/upper.txt'))
    await writeFile(join(tmp.path, 'bronze.yaml'), job('bronze', 'bronze',
      'if [ -f inputs/checkpoint/step.txt ]; then cp inputs/checkpoint/step.txt outputs/resumed.txt; exit 0; fi; trap "echo 1 > outputs/step.txt; exit 0" TERM; echo working; while true; do sleep 0.2; done'))
    await writeFile(join(tmp.path, 'gold.yaml'), job('gold', 'gold', 'echo gold > outputs/gold.txt'))
  })

  after(async () => {
    await net?.stop()
    await tmp?.cleanup()
  })

  it('runs a job with real inputs on a provider; outputs and attestation verify', async () => {
    const { code, summary, stderr } = await submit(net.renters[0] as NodeProcess, tmp.path, 'upper.yaml')
    assert.equal(code, 0, `${JSON.stringify(summary)}\n${stderr}`)
    assert.equal(summary.status, 'ok')
    assert.equal(summary.attempts, 1)
    assert.equal(summary.provider, net.providers[0]?.peerId, 'the cheapest provider')
    assert.equal(summary.attestation.status, 'COMPLETED')
    assert.equal(summary.attestation.verified, true)
    assert.match(summary.attestation.outputDigest, /^[0-9a-f]{64}$/)
    assert.equal(summary.outputDir, join(tmp.path, 'idlegrid-out', summary.jobId))
    assert.equal(await readFile(join(summary.outputDir, 'outputs', 'upper.txt'), 'utf8'), 'HELLO IDLEGRID\n')
    assert.ok((await readFile(join(summary.outputDir, 'attestation.bin'))).length > 100)
    assert.deepEqual(summary.inputs, { sentBytes: 15, cachedBytes: 0 })
  })

  it('the same job again on the same provider: its input cache holds the input, nothing is sent (issue 39)', async () => {
    const { code, summary, stderr } = await submit(net.renters[0] as NodeProcess, tmp.path, 'upper.yaml')
    assert.equal(code, 0, `${JSON.stringify(summary)}\n${stderr}`)
    assert.equal(summary.provider, net.providers[0]?.peerId)
    assert.deepEqual(summary.inputs, { sentBytes: 0, cachedBytes: 15 })
    assert.equal(await readFile(join(summary.outputDir, 'outputs', 'upper.txt'), 'utf8'), 'HELLO IDLEGRID\n')
    const jobs = await callControl((net.providers[0] as NodeProcess).dataDir, 'exec.jobs', {}, { timeoutMs: 5_000 }) as { inputCache?: { entries: number, hits: number } }
    assert.equal(jobs.inputCache?.entries, 1)
    assert.ok((jobs.inputCache?.hits ?? 0) >= 1)
  })

  it('a public input lands in the provider\'s cache and its record: market ls --dataset lists the holder', async () => {
    const weights = Buffer.alloc(64 * 1024, 7)
    await writeFile(join(tmp.path, 'weights.bin'), weights)
    await writeFile(join(tmp.path, 'open.yaml'), [
      'name: open', 'tier: silver', 'workload: evaluation',
      'runtime:', '  command: [/bin/sh, -c, "wc -c < inputs/weights.bin > outputs/size.txt"]',
      'publicInputs: [weights.bin]', 'estimatedMinutes: 1',
      'auction:', '  bidWindowMs: 700', '  acceptTimeoutMs: 3000'
    ].join('\n') + '\n')
    const { code, summary, stderr } = await submit(net.renters[0] as NodeProcess, tmp.path, 'open.yaml')
    assert.equal(code, 0, `${JSON.stringify(summary)}\n${stderr}`)
    const digest = createHash('sha256').update(weights).digest('hex')
    const holders = await waitFor(async () => {
      const run = await cli(['market', 'ls', '--json', '--dataset', digest, '--data-dir', (net.renters[0] as NodeProcess).dataDir])
      assert.equal(run.code, 0, run.stderr)
      const listed = JSON.parse(run.stdout.trim()) as Array<{ peerId: string }>
      return listed.length > 0 ? listed : undefined
    }, { timeoutMs: 60_000, intervalMs: 2_000, what: 'the provider listed as a holder of the public input' })
    assert.deepEqual(holders.map(h => h.peerId), [summary.provider])
  })

  it('a gold job on a full provider preempts a bronze job, which completes elsewhere', async () => {
    const renter = net.renters[0] as NodeProcess
    const bronze = submit(renter, tmp.path, 'bronze.yaml')
    const p1 = net.providers[0] as NodeProcess
    await waitFor(async () => await runningOn([p1], 'bronze'), { timeoutMs: 60_000, what: 'bronze job running on P1' })
    const gold = await submit(renter, tmp.path, 'gold.yaml')
    assert.equal(gold.summary.status, 'ok', JSON.stringify(gold.summary))
    assert.equal(gold.summary.provider, p1.peerId)
    const { summary } = await bronze
    assert.equal(summary.status, 'ok', JSON.stringify(summary))
    assert.deepEqual(summary.history.map((h: any) => h.outcome), ['preempted', 'ok'])
    assert.equal(summary.history[0].provider, p1.peerId)
    assert.notEqual(summary.provider, p1.peerId)
    // the checkpoint written on SIGTERM came back and was handed to the next provider
    assert.equal((await readFile(join(summary.history[0].dir, 'outputs', 'step.txt'), 'utf8')).trim(), '1')
    assert.equal((await readFile(join(summary.outputDir, 'outputs', 'resumed.txt'), 'utf8')).trim(), '1')
  })

  it('a provider killed with SIGKILL mid-job: the job completes on another provider', async () => {
    const renter = net.renters[0] as NodeProcess
    const pending = submit(renter, tmp.path, 'slow.yaml')
    const victim = await waitFor(async () => await runningOn(net.providers, 'slow'), { timeoutMs: 60_000, what: 'slow job running' })
    victim.child.kill('SIGKILL')
    const { summary } = await pending
    assert.equal(summary.status, 'ok', JSON.stringify(summary))
    assert.equal(summary.history[0].provider, victim.peerId)
    assert.equal(summary.history[0].outcome, 'lost')
    assert.notEqual(summary.provider, victim.peerId)
    assert.equal(await readFile(join(summary.outputDir, 'outputs', 'upper.txt'), 'utf8'), 'HELLO IDLEGRID\n')
  })
})
