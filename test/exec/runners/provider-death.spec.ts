/**
 * A provider killed outright (SIGKILL: no stop, no cleanup) takes its running jobs with it:
 * the process runner starts each job with a parent-death signal. Before, a lease's server ran
 * on for ever after its provider died, holding a GPU slot nobody accounted for.
 */
import { strict as assert } from 'node:assert'
import { spawn } from 'node:child_process'
import { chmod, readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { tempDir, waitFor } from '../../utils/index.js'
import { running } from './process-fixtures.js'

const RUNNERS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src', 'exec', 'runners', 'index.js')

describe('exec: a job dies with its provider', function () {
  this.timeout(30_000)

  it('SIGKILL of the provider process ends the job it was running within seconds', async () => {
    const tmp = await tempDir('idlegrid-provider-death-')
    let jobPid: number | undefined
    try {
      // the job user (root runs jobs as a uid of their own) must pass through the temp dir
      await chmod(tmp.path, 0o711)
      const dir = join(tmp.path, 'work', 'job')
      // a stand-in provider: the real process runner in a process of its own, running a job that never ends
      const script = `
        const { ProcessRunner } = await import(${JSON.stringify(RUNNERS)})
        const { mkdir } = await import('node:fs/promises')
        const runner = new ProcessRunner({ cgroups: false })
        await runner.prepareWorkRoot(${JSON.stringify(join(tmp.path, 'work'))})
        await mkdir(${JSON.stringify(join(tmp.path, 'work', 'job', 'outputs'))}, { recursive: true, mode: 0o700 })
        runner.start({ jobId: 'ab'.repeat(16), workDir: ${JSON.stringify(dir)}, command: ['/bin/sh', '-c', 'echo $$ > outputs/pid; exec sleep 1000'], env: {}, timeoutMs: 600000, graceMs: 300 }, () => {})
        setInterval(() => {}, 1000)`
      const provider = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'inherit'] })
      const pidFile = join(dir, 'outputs', 'pid')
      jobPid = await waitFor(async () => Number((await readFile(pidFile, 'utf8').catch(() => '')).trim()) || undefined, { timeoutMs: 15_000, what: 'the job to start' })
      const pid = jobPid
      assert.ok(running(pid))
      provider.kill('SIGKILL')
      await waitFor(() => !running(pid), { timeoutMs: 5_000, what: `job ${pid} to end after its provider was SIGKILLed` })
    } finally {
      // a failed run leaves no sleeper behind
      if (jobPid != null && running(jobPid)) process.kill(jobPid, 'SIGKILL')
      await tmp.cleanup()
    }
  })
})
