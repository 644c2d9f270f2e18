import { asEnum, asNumber, readConfigFile, resolveConfig, ROLES, type Role } from '../../config/index.js'
import { runDoctor, type CheckResult } from '../../doctor/index.js'
import { EXIT } from '../errors.js'
import { defaultBootstrapPeers } from '../load-config.js'
import { COMMON_OPTIONS, NODE_OPTIONS, nodeFlags } from '../options.js'
import type { CommandDefinition } from '../command.js'

const MARK: Record<CheckResult['status'], string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' }

export const doctorCommand: CommandDefinition = {
  name: 'doctor',
  usage: 'idlegrid doctor [--role provider|renter|bootstrap] [options]',
  options: {
    role: { type: 'string', valueName: 'ROLE', description: 'the role to check for (default: the config file\'s role, else provider)' },
    'nvidia-smi': { type: 'string', valueName: 'PATH', description: 'nvidia-smi binary (default: nvidia-smi on PATH)' },
    'docker-host': { type: 'string', valueName: 'ADDR', description: 'Docker engine address (default: $DOCKER_HOST, else the docker default)' },
    runner: { type: 'string', valueName: 'docker|process', description: 'the provider\'s runner; process needs no Docker (default docker)' },
    'wait-seconds': { type: 'string', valueName: 'S', description: 'how long to listen for peers\' heartbeats for the clock check (default 12)' },
    offline: { type: 'boolean', description: 'skip the network checks (bootstrap peers, clock)' },
    ...NODE_OPTIONS,
    ...COMMON_OPTIONS
  },
  details: 'Each check prints ok, WARN or FAIL with a one-line fix; the exit code is 1 when any check fails.\nThe network checks use a throw-away peer: a node running on the data directory is not disturbed.',
  run: async (values, _, out) => {
    const file = typeof values.config === 'string' ? await readConfigFile(values.config) : undefined
    const role: Role = values.role !== undefined ? asEnum(values.role, 'role', ROLES) : file?.role != null ? asEnum(file.role, 'role', ROLES) : 'provider'
    const config = resolveConfig({
      role,
      file,
      flags: nodeFlags(values),
      env: process.env,
      defaultBootstrap: await defaultBootstrapPeers()
    })
    const stringField = (key: string): string | undefined => typeof config.provider[key] === 'string' ? config.provider[key] : undefined
    const results = await runDoctor({
      config,
      nvidiaSmi: (values['nvidia-smi'] as string | undefined) ?? stringField('nvidiaSmi'),
      dockerHost: (values['docker-host'] as string | undefined) ?? stringField('dockerHost'),
      simulateGpu: Array.isArray(config.provider.simulateGpu) ? config.provider.simulateGpu.map(String) : typeof config.provider.simulateGpu === 'string' ? [config.provider.simulateGpu] : undefined,
      runner: values.runner === undefined ? undefined : asEnum(values.runner, 'runner', ['docker', 'process'] as const),
      waitMs: values['wait-seconds'] === undefined ? undefined : 1000 * asNumber(values['wait-seconds'], 'wait-seconds', { min: 0, max: 300 }),
      offline: values.offline === true
    })
    const failed = results.some(r => r.status === 'fail')
    out.data({ role, ok: !failed, checks: results })
    out.info(`idlegrid doctor (${role}, data dir ${config.dataDir})`)
    for (const r of results) {
      out.info(`${MARK[r.status]}  ${r.id}: ${r.detail}`)
      if (r.fix != null) out.info(`      fix: ${r.fix}`)
    }
    const counts = (['fail', 'warn'] as const).map(s => `${results.filter(r => r.status === s).length} ${s === 'fail' ? 'failed' : 'warnings'}`).join(', ')
    out.info(failed ? `not ready: ${counts}` : `ready (${counts})`)
    return failed ? EXIT.failure : EXIT.ok
  }
}
