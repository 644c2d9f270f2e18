/**
 * Files a user hands the node: job files (loadJobSpec: YAML read, flags, parseJobSpec) and
 * config files (readConfigFile, resolveConfig for every role, the provider section through
 * parsePolicy). Seeds are the example files in examples/; inputs are edited text (YAML tokens,
 * anchors and aliases, duplicated and dropped lines, splices) and random text, written to a
 * real file each time so the real reading path runs.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parsePolicy } from '../../../src/capability/policy/policy.js'
import { ConfigError, readConfigFile, resolveConfig, ROLES } from '../../../src/config/index.js'
import { loadJobSpec } from '../../../src/market/renter/job-spec.js'
import { tempDir } from '../../utils/wait.js'
import { textInput } from '../mutate.js'
import { repoRoot } from '../vectors.js'
import { BoundError, type FuzzTarget, type TargetFactory } from '../target.js'

function examples (...dirs: string[]): string[] {
  const root = repoRoot()
  return dirs.flatMap(dir => readdirSync(join(root, dir)).filter(f => f.endsWith('.yaml')).map(f => readFileSync(join(root, dir, f), 'utf8')))
}

const CONFIG_SEEDS = [
  'role: provider\nlisten: [/ip4/127.0.0.1/tcp/0]\nbootstrap: []\nmaxConnections: 50\ntargetPeers: 8\nheartbeatSeconds: 5\nprivateAddresses: auto\n',
  'dataDir: ~/.idlegrid-test\ntrust: [12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA]\nannounce: []\n'
]

const jobFile: TargetFactory = {
  name: 'file/job',
  build: async () => {
    const dir = await tempDir('idlegrid-fuzz-job-')
    const path = join(dir.path, 'job.yaml')
    return {
      name: 'file/job',
      what: 'loadJobSpec on edited YAML job files',
      typed: [ConfigError],
      arbitrary: textInput(examples('examples/jobs', 'examples/demo'), 16 * 1024),
      async: true,
      weight: 1,
      run: async (input) => {
        writeFileSync(path, input)
        const spec = await loadJobSpec(path, {})
        if (spec.inputs.length > 4096 || spec.runtime.command.length > 256 || spec.datasets.length > 16) throw new BoundError('a job spec list past its bound')
      },
      close: dir.cleanup
    } satisfies FuzzTarget
  }
}

const configFile: TargetFactory = {
  name: 'file/config',
  build: async () => {
    const dir = await tempDir('idlegrid-fuzz-config-')
    const path = join(dir.path, 'config.yaml')
    return {
      name: 'file/config',
      what: 'readConfigFile + resolveConfig (each role) + parsePolicy on edited YAML config files',
      typed: [ConfigError],
      arbitrary: textInput([...examples('examples'), ...CONFIG_SEEDS], 16 * 1024),
      async: true,
      weight: 1,
      run: async (input) => {
        writeFileSync(path, input)
        const file = await readConfigFile(path)
        const role = ROLES[input.length % ROLES.length]
        const config = resolveConfig({ role, file, env: {} })
        if (role === 'provider') parsePolicy(config.provider)
      },
      close: dir.cleanup
    } satisfies FuzzTarget
  }
}

export const fileTargets: TargetFactory[] = [jobFile, configFile]
