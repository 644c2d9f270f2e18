import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'

export interface OtherUser { uid: number, gid: number }

/**
 * Another local user to test permissions against (`nobody`), or the reason there is none
 * here: tests that need one skip with that reason printed. Switching uid needs root.
 */
export async function otherUser (): Promise<OtherUser | string> {
  if (process.getuid?.() !== 0) return `not root (uid ${String(process.getuid?.())}): cannot act as another user`
  let ids: OtherUser = { uid: 65534, gid: 65534 }
  const line = (await readFile('/etc/passwd', 'utf8').catch(() => '')).split('\n').find(l => l.startsWith('nobody:'))
  if (line != null) ids = { uid: Number(line.split(':')[2]), gid: Number(line.split(':')[3]) }
  const probe = await runAs(ids, 'process.stdout.write(String(process.getuid()))')
  if (probe.code !== 0 || probe.stdout !== String(ids.uid)) return `cannot run ${process.execPath} as uid ${ids.uid}: ${probe.stderr.trim() || `exit ${String(probe.code)}`}`
  return ids
}

/** Runs `script` (CommonJS) in a Node child under `user`'s uid and gid, bounded in time. */
export async function runAs (
  user: OtherUser,
  script: string,
  args: string[] = [],
  timeoutMs = 10_000
): Promise<{ code: number | null, stdout: string, stderr: string }> {
  return await new Promise(resolve => {
    const child = spawn(process.execPath, ['-e', script, ...args], { uid: user.uid, gid: user.gid, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
    child.on('error', (err) => { resolve({ code: null, stdout, stderr: stderr + String(err) }) })
    child.on('close', (code) => { resolve({ code, stdout, stderr }) })
  })
}
