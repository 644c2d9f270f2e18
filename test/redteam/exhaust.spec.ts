/**
 * Red team, issue 13 attack 5 over the network: a renter process tries to exhaust a provider.
 * Separate `idlegrid` processes on 127.0.0.1 (a bootstrap, ONE honest provider with one
 * simulated GPU and the process runner, an honest renter) and the attacker program as a real
 * renter (attacks/exhaust-provider.ts): 8 awards accepted at once, then 8 job streams opened
 * together, each declaring and sending 1.5 MB of inputs. The provider is measured from outside
 * (its control socket's `exec.jobs`, its work root on disk) while the attacker holds its
 * streams; then an honest `idlegrid submit` must still complete.
 */
import * as assert from 'node:assert/strict'
import { chmod, mkdir, readdir, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { callControl } from '../../src/control/client.js'
import { submitJob } from '../exec/fixtures.js'
import { recordAttack, startLocalNetwork, tempDir, waitFor, waitForMesh, type LocalNetwork, type NodeProcess } from '../utils/index.js'
import { startAttacker, type AttackerProcess } from './harness.js'

const JOBS = 8
const INPUT_BYTES = 1_500_000

interface ExecJobs {
  capacity: { freeSlots?: number, totalSlots?: number } & Record<string, unknown>
  disk: { usedBytes: number, budgetBytes: number }
  jobs: Array<{ state: string, renter?: string }>
}

/** Bytes of every file under `dir`, and how many entries it holds at the top. */
async function diskUse (dir: string): Promise<{ bytes: number, entries: number }> {
  let bytes = 0
  // a file the input cache shares with a job dir is one inode under two names: counted once
  const seen = new Set<number>()
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = join(d, e.name)
      if (e.isDirectory()) { await walk(p); continue }
      const st = await stat(p).catch(() => undefined)
      if (st == null || seen.has(st.ino)) continue
      seen.add(st.ino)
      bytes += st.size
    }
  }
  await walk(dir)
  // job work dirs; the provider's input cache lives in the work root too (its bytes count above)
  return { bytes, entries: (await readdir(dir).catch(() => [])).filter(name => name !== 'input-cache').length }
}

describe('red team: a renter process exhausts the provider (issue 13 attack 5)', function () {
  this.timeout(90_000)
  let net: LocalNetwork
  let tmp: { path: string, cleanup: () => Promise<void> }
  let attacker: AttackerProcess | undefined
  let workRoot: string
  const renter = (): NodeProcess => net.renters[0] as NodeProcess
  const provider = (): NodeProcess => net.providers[0] as NodeProcess
  const execJobs = async (): Promise<ExecJobs> => await callControl(provider().dataDir, 'exec.jobs', {}, { timeoutMs: 10_000 }) as ExecJobs

  before(async () => {
    tmp = await tempDir('idlegrid-redteam-exhaust-')
    // jobs run as another user when we are root: it must pass through to the work root
    await chmod(tmp.path, 0o711)
    workRoot = join(tmp.path, 'provider-work')
    await mkdir(workRoot, { mode: 0o711 })
    net = await startLocalNetwork({
      baseDir: tmp.path,
      providers: 1,
      renters: 1,
      providerArgs: () => ['--runner', 'process', '--simulate-gpu', 'H100:80', '--region', 'eu-west', '--price-floor', '1.25', '--work-root', workRoot]
    })
    const view = await waitForMesh(net.all, 60_000)
    assert.ok(view.complete, view.missing.join('\n'))
    await writeFile(join(tmp.path, 'words.txt'), 'hello idlegrid\n')
    await writeFile(join(tmp.path, 'upper.yaml'), [
      'name: upper', 'tier: silver', 'workload: evaluation',
      'runtime:', `  command: [/bin/sh, -c, ${JSON.stringify('tr a-z A-Z < inputs/words.txt > outputs/upper.txt')}]`,
      'inputs: [words.txt]', 'estimatedMinutes: 1',
      'auction:', '  bidWindowMs: 1000', '  acceptTimeoutMs: 3000'
    ].join('\n') + '\n')
  })

  after(async () => {
    await attacker?.stop(2_000)
    await net?.stop()
    await tmp?.cleanup()
  })

  it(`red team: ${JOBS} accepted awards for 1 GPU open their streams at once with large inputs: one slot taken, the rest refused before any byte, an honest job still completes`, async () => {
    attacker = await startAttacker('exhaust-provider', { bootstrap: net.bootstrap.addrs[0] as string, baseDir: tmp.path, options: { jobs: JOBS, 'input-bytes': INPUT_BYTES } })
    const awarded = await attacker.line(l => l?.awarded != null && l?.streamsOpen == null, 45_000)
    assert.ok(awarded.awarded >= 2, `the attacker got several awards accepted: ${JSON.stringify(awarded)}\n${attacker.stderr()}`)
    assert.deepEqual(awarded.winners, [provider().peerId])
    const open = await attacker.line(l => l?.streamsOpen === true, 45_000)
    // measured on the provider while the attacker still holds every stream open
    const during = await execJobs()
    const disk = await diskUse(workRoot)
    const live = during.jobs.filter(j => j.state !== 'rejected' && j.state !== 'done')
    console.log(`      [figures] ${String(open.awarded)} awards accepted; ${String(open.refusedBeforeBytes)} refused before any input byte (${String(open.rejectedFrames)} NO_CAPACITY frames, the rest reset at the inbound stream cap); ${String(open.accepted)} accepted; provider: ${live.length} live job(s) ${JSON.stringify(live.map(j => j.state))}, capacity ${JSON.stringify(during.capacity)}, disk budget ${during.disk.usedBytes}/${during.disk.budgetBytes} held; work root ${disk.entries} dir(s), ${disk.bytes} bytes of ${String(open.bytesOffered)} offered; answers ${JSON.stringify(open.answers)}`)
    assert.ok(open.accepted <= 1, `at most the provider's one slot: ${JSON.stringify(open)}`)
    assert.equal(open.refusedBeforeBytes, open.awarded - open.accepted, `every other stream refused before its bytes: ${JSON.stringify(open)}`)
    // a refusal is a NO_CAPACITY Rejected frame, or a reset from libp2p past the job protocol's
    // inbound stream cap (2 per GPU + 4)
    assert.ok((open.answers as string[]).filter(a => a !== 'accepted').every(a => /^rejected NO_CAPACITY|^closed: .*stream reset/.test(a)), JSON.stringify(open.answers))
    assert.ok(disk.entries <= 1, `one work dir at most: ${disk.entries}`)
    assert.ok(disk.bytes <= INPUT_BYTES, `disk use bounded by the one reserved job's inputs: ${disk.bytes}`)
    assert.ok(during.disk.usedBytes <= during.disk.budgetBytes)
    attacker.go()
    const { error } = await attacker.outcome
    assert.equal(error, undefined, error)
    // the attacker's streams are gone: its slot comes back, and an honest job runs on it
    await waitFor(async () => (await execJobs()).jobs.every(j => j.state === 'rejected' || j.state === 'done'), { timeoutMs: 20_000, what: 'the attacker\'s job to end on the provider' })
    // an award it accepted and never started (its stream reset at the cap) holds the slot for 15 s at most
    await waitFor(async () => (await execJobs()).capacity.free === 1, { timeoutMs: 30_000, what: 'the slot free again' })
    const run = await submitJob(renter().dataDir, tmp.path, 'upper.yaml', ['--out-dir', join(tmp.path, 'out')], 45_000)
    assert.equal(run.code, 0, `${JSON.stringify(run.summary)}\n${run.stderr.slice(-2000)}`)
    assert.equal(run.summary.status, 'ok', JSON.stringify(run.summary))
    assert.equal(run.summary.provider, provider().peerId)
    recordAttack({
      issue: '13.5',
      attack: `exhaust the provider (attacker process, real renter): ${String(open.awarded)} accepted awards for 1 GPU, streams opened together, ${INPUT_BYTES} B of inputs each`,
      got: `${String(open.refusedBeforeBytes)} refused before any byte (${String(open.rejectedFrames)} NO_CAPACITY, ${open.refusedBeforeBytes - open.rejectedFrames} reset at the stream cap), ${String(open.accepted)} slot taken; ${disk.entries} work dir, ${disk.bytes} B on disk of ${String(open.bytesOffered)} offered; honest job ${String(run.summary.status)}`,
      limit: 'slot + disk reserved at Start, before inputs'
    })
  })
})
