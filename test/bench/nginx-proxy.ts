/**
 * nginx (Debian's package) as a reverse proxy to one upstream, for the serve benchmark's
 * per-core comparison (issue 38 item 6): one process (`master_process off`, one worker's work in
 * it), keep-alive to the upstream as the plain Node proxy has, access log off. Its CPU is read
 * from /proc/<pid>/schedstat (ns on CPU). Undefined, with the reason, where nginx is missing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { connect, createServer } from 'node:net'
import { join } from 'node:path'

export interface NginxProxy { url: string, cpuMs: () => number, close: () => void }

function nginxBinary (): string | undefined {
  for (const path of ['/usr/sbin/nginx', '/usr/bin/nginx']) {
    if (spawnSync(path, ['-v'], { stdio: 'ignore' }).status === 0) return path
  }
  return undefined
}

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => { const { port } = s.address() as { port: number }; s.close(() => { resolve(port) }) })
  })
}

/** CPU time of `pid` so far, ms (schedstat: ns on CPU, exact; stat's ticks are 10 ms). */
function processCpuMs (pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
  } catch {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
    return (Number(fields[11]) + Number(fields[12])) * 10
  }
}

export async function nginxProxy (dir: string, upstreamPort: number): Promise<NginxProxy | { skipped: string }> {
  const nginx = nginxBinary()
  if (nginx == null) return { skipped: 'no nginx here (Debian: apt-get install nginx-light)' }
  const port = await freePort()
  const tmp = join(dir, 'nginx')
  await mkdir(join(tmp, 'tmp'), { recursive: true })
  const conf = [
    'daemon off;', 'master_process off;', 'worker_processes 1;', `pid ${join(tmp, 'nginx.pid')};`, 'error_log stderr warn;',
    'events { worker_connections 1024; }',
    'http {',
    '  access_log off;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(k => `  ${k}_temp_path ${join(tmp, 'tmp', k)};`),
    `  upstream up { server 127.0.0.1:${upstreamPort}; keepalive 64; }`,
    `  server { listen 127.0.0.1:${port}; location / { proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection ""; } }`,
    '}'
  ].join('\n')
  await writeFile(join(tmp, 'nginx.conf'), conf)
  const child: ChildProcess = spawn(nginx, ['-p', tmp, '-c', join(tmp, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'inherit'] })
  // up once it accepts a connection (bounded)
  for (let i = 0; i < 50; i++) {
    const up = await new Promise<boolean>(resolve => {
      const c = connect(port, '127.0.0.1', () => { c.destroy(); resolve(true) })
      c.on('error', () => { resolve(false) })
    })
    if (up) break
    if (child.exitCode != null) return { skipped: `nginx exited with ${child.exitCode}` }
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  const pid = child.pid as number
  return { url: `http://127.0.0.1:${port}`, cpuMs: () => processCpuMs(pid), close: () => { child.kill('SIGTERM') } }
}
