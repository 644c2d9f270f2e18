/**
 * The systemd units in bootstrap/ (issue 18 item 3): `systemd-analyze verify` has nothing to
 * say about them, and each one agrees with the install steps in its header and docs/install.md:
 * the config `idlegrid init` writes there is the one ExecStart runs, the CLI accepts
 * ExecStart's arguments, and the data directory is the unit's StateDirectory, writable under
 * ProtectSystem=strict.
 */
import * as assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { access, readFile } from 'node:fs/promises'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { initCommand } from '../../src/cli/commands/init.js'
import { bootstrapCommand, providerCommand, renterCommand } from '../../src/cli/commands/roles.js'
import { parseCommand } from '../../src/cli/options.js'
import { createOutput } from '../../src/cli/output.js'
import { readConfigFile, resolveConfig, type Role } from '../../src/config/index.js'
import { tempDir } from '../utils/index.js'
import type { CommandDefinition } from '../../src/cli/command.js'

const UNITS = fileURLToPath(new URL('../../../bootstrap/', import.meta.url))
const ROLES: Record<Role, CommandDefinition> = {
  bootstrap: bootstrapCommand,
  provider: providerCommand,
  renter: renterCommand
}
const SEED = '/dns4/seed.example.org/tcp/4001/p2p/12D3KooWDK5GBtaYkcCZhQb6n17o983ZrtWRLjoP7zGhp5RjMfUv'

interface Unit { header: string[], entries: Map<string, string[]> }

/** `[Section]` and `Key=Value` lines as 'Section.Key' → values; the leading comment block as the header. */
function parseUnit (text: string): Unit {
  const header: string[] = []
  const entries = new Map<string, string[]>()
  let section = ''
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) { if (section === '') header.push(line.slice(1).trim()); continue }
    const head = /^\[(\w+)\]$/.exec(line)
    if (head != null) { section = head[1] as string; continue }
    const at = line.indexOf('=')
    if (at > 0) {
      const key = `${section}.${line.slice(0, at)}`
      entries.set(key, [...(entries.get(key) ?? []), line.slice(at + 1)])
    }
  }
  return { header, entries }
}

const one = (unit: Unit, key: string): string => {
  const values = unit.entries.get(key) ?? []
  assert.equal(values.length, 1, `${key}: one value`)
  return values[0] as string
}

/** `--flag VALUE` in a command line's words. */
const flag = (words: string[], name: string): string | undefined => {
  const i = words.indexOf(name)
  return i < 0 ? undefined : words[i + 1]
}

/** Whether the tool runs here at all (a missing binary is a skip, any other failure is the test's). */
async function haveSystemdAnalyze (): Promise<boolean> {
  return await new Promise(resolve => { execFile('systemd-analyze', ['--version'], { timeout: 30_000 }, (err: any) => { resolve(err?.code !== 'ENOENT') }) })
}

async function verify (path: string): Promise<{ code: number, said: string }> {
  return await new Promise(resolve => {
    execFile('systemd-analyze', ['verify', path], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err == null ? 0 : typeof err.code === 'number' ? err.code : 1, said: (stdout + stderr).trim() })
    })
  })
}

describe('install: the systemd units', function () {
  this.timeout(60_000)

  for (const role of Object.keys(ROLES) as Role[]) {
    const path = `${UNITS}idlegrid-${role}.service`

    it(`idlegrid-${role}.service: systemd-analyze verify reports nothing`, async function () {
      if (!await haveSystemdAnalyze()) {
        console.log('      skipped: no systemd-analyze here (Debian\'s systemd package has it)')
        this.skip()
      }
      const { code, said } = await verify(path)
      assert.equal(said, '', 'no warning or error')
      assert.equal(code, 0)
    })

    it(`idlegrid-${role}.service: ExecStart runs the config its install steps write, in its StateDirectory`, async () => {
      const unit = parseUnit(await readFile(path, 'utf8'))
      const words = one(unit, 'Service.ExecStart').split(/\s+/)
      assert.deepEqual(words.slice(0, 3), ['/usr/bin/env', 'idlegrid', role], 'the idlegrid command on PATH (npm install -g), the role')
      // the CLI takes these arguments as they are
      const { values } = parseCommand(ROLES[role], words.slice(3))
      const config = values.config as string
      assert.ok(config != null, 'ExecStart names its config')
      const stateDir = `/var/lib/${one(unit, 'Service.StateDirectory')}`
      assert.ok(one(unit, 'Service.ReadWritePaths').split(/\s+/).includes(stateDir), 'the data directory is writable under ProtectSystem=strict')
      assert.equal(one(unit, 'Service.ProtectSystem'), 'strict')
      assert.equal(one(unit, 'Service.User'), 'idlegrid')

      if (role === 'bootstrap') {
        // the seed's config is the example in bootstrap/, copied to the path ExecStart reads
        assert.ok(unit.header.some(l => l.includes(config.split('/').pop() as string) || l.includes('seed-node.example.yaml')))
        const example = await readConfigFile(`${UNITS}seed-node.example.yaml`)
        assert.equal(example.role, 'bootstrap')
        assert.equal(example.dataDir, stateDir, 'the example\'s data directory is the unit\'s StateDirectory')
        return
      }
      // the header's own steps: init into the state directory, doctor on the file ExecStart runs
      const init = unit.header.find(l => l.includes(`idlegrid init --role ${role}`))
      const doctor = unit.header.find(l => l.includes('idlegrid doctor'))
      assert.ok(init != null && doctor != null, 'the header shows init and doctor')
      const initWords = init.slice(init.indexOf('idlegrid init')).split(/\s+/)
      assert.equal(flag(initWords, '--data-dir'), stateDir)
      assert.equal(flag(doctor.split(/\s+/), '--config'), config, 'doctor checks the file ExecStart runs')
      assert.match(unit.header.join('\n'), new RegExp(`useradd --system --home ${stateDir} idlegrid`))

      // run that init (into a temp dir standing for /var/lib/idlegrid; simulated GPUs on this box)
      // and load what it wrote as ExecStart would
      const dir = await tempDir('idlegrid-unit-')
      try {
        const here = (p: string): string => p.replace(stateDir, `${dir.path}/state`)
        const args = initWords.slice(2).map(w => w === '/dns4/SEED/tcp/4001/p2p/PEER_ID' ? SEED : here(w))
        const sink = new PassThrough()
        const parsed = parseCommand(initCommand, [...args, ...(role === 'provider' ? ['--simulate-gpu', 'H100:80'] : [])])
        assert.equal(await initCommand.run(parsed.values, parsed.positionals, createOutput(false, sink, sink)), 0)
        await access(here(config))
        const resolved = resolveConfig({ role, file: await readConfigFile(here(config)), env: {} })
        assert.equal(resolved.dataDir, `${dir.path}/state`, 'the node keeps its state in the unit\'s StateDirectory')
      } finally {
        await dir.cleanup()
      }
    })
  }
})
