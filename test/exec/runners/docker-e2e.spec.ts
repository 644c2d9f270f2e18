/**
 * End to end on a real Docker engine: `idlegrid provider --runner docker` processes (one on the
 * engine, given only by --docker-host; one whose engine is elsewhere) and a renter process,
 * jobs submitted with `idlegrid submit --json`. The renter verifies what the provider attests.
 */
import { strict as assert } from 'node:assert'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startLocalNetwork, waitForMesh, type LocalNetwork, type NodeProcess } from '../../utils/index.js'
import { recordAttack, tempDir } from '../../utils/index.js'
import { engineMissing, TEST_IMAGE } from './docker-engine.js'
import { submitJob } from '../fixtures.js'

describe('exec: docker runner end to end (provider processes on a real engine)', function () {
  this.timeout(300_000)
  let net: LocalNetwork | undefined
  let tmp: { path: string, cleanup: () => Promise<void> } | undefined

  before(async function () {
    const why = engineMissing()
    const host = process.env.DOCKER_HOST
    if (why != null || host == null || host === '') {
      console.log(`      (skipped: ${why ?? 'DOCKER_HOST is not set: the provider is given the engine by --docker-host'})`)
      this.skip()
    }
    tmp = await tempDir('idlegrid-docker-e2e-')
    const common = ['--runner', 'docker', '--images', TEST_IMAGE, '--docker-pull', 'never', '--simulate-gpu', 'H100:80', '--price-floor', '1', '--grace', '2']
    // the providers see no DOCKER_HOST: only the flag tells them where the engine is
    delete process.env.DOCKER_HOST
    try {
      net = await startLocalNetwork({
        baseDir: tmp.path,
        providers: 2,
        renters: 1,
        providerArgs: (i) => [...common, ...(i === 0 ? ['--region', 'eu-west', '--docker-host', host as string] : ['--region', 'us-east', '--docker-host', 'unix:///tmp/idlegrid-no-engine/docker.sock'])]
      })
    } finally {
      process.env.DOCKER_HOST = host
    }
    const view = await waitForMesh(net.all, 120_000)
    assert.ok(view.complete, view.missing.join('\n'))
    await writeFile(join(tmp.path, 'words.txt'), 'hello idlegrid\n')
    const job = (name: string, region: string, script: string): string => [
      `name: ${name}`, 'tier: silver', 'workload: evaluation',
      'runtime:', `  image: ${TEST_IMAGE}`, `  command: [sh, -c, ${JSON.stringify(script)}]`,
      'inputs: [words.txt]', 'estimatedMinutes: 1',
      'constraints:', `  regions: [${region}]`,
      'auction:', '  bidWindowMs: 700', '  acceptTimeoutMs: 3000'
    ].join('\n') + '\n'
    await writeFile(join(tmp.path, 'upper.yaml'), job('upper', 'eu-west', 'tr a-z A-Z < inputs/words.txt > outputs/upper.txt && id -u > outputs/uid && echo done'))
    await writeFile(join(tmp.path, 'dead.yaml'), job('dead', 'us-east', 'echo never > outputs/never.txt'))
  })

  after(async () => {
    await net?.stop()
    await tmp?.cleanup()
  })

  it('runs a renter\'s job in a container; outputs and attestation verify', async () => {
    const { code, summary, stderr } = await submitJob((net?.renters[0] as NodeProcess).dataDir, tmp?.path as string, 'upper.yaml')
    assert.equal(code, 0, `${JSON.stringify(summary)}\n${stderr}`)
    assert.equal(summary.status, 'ok')
    assert.equal(summary.provider, net?.providers[0]?.peerId)
    assert.equal(summary.attestation.status, 'COMPLETED')
    assert.equal(summary.attestation.verified, true)
    assert.equal(await readFile(join(summary.outputDir, 'outputs', 'upper.txt'), 'utf8'), 'HELLO IDLEGRID\n')
    assert.equal(await readFile(join(summary.outputDir, 'outputs', 'uid'), 'utf8'), '65534\n')
  })

  it('red team (issue 13 item 7): a provider whose engine is unreachable attests FAILED, never COMPLETED', async () => {
    const { summary, stderr } = await submitJob((net?.renters[0] as NodeProcess).dataDir, tmp?.path as string, 'dead.yaml', ['--max-attempts', '1'])
    const status = String(summary.attestation?.status ?? 'none')
    recordAttack({
      issue: '13.7',
      attack: 'provider with its Docker engine elsewhere runs a job (multi-process)',
      got: `job ${String(summary.status)}, attestation ${status} (verified ${String(summary.attestation?.verified)})`,
      limit: 'engine errors are FAILED attestations with the reason'
    })
    assert.equal(summary.provider, net?.providers[1]?.peerId, `${JSON.stringify(summary)}\n${stderr}`)
    assert.notEqual(summary.status, 'ok')
    assert.equal(status, 'FAILED')
    assert.equal(summary.attestation.verified, true)
  })
})
