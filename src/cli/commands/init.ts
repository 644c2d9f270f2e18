import { mkdir, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { detectGpus, parseSimulatedGpus } from '../../capability/index.js'
import { asEnum, asObject, defaultDataDir, resolveConfig, ROLES, asStringList } from '../../config/index.js'
import { configText, proposeProvider } from '../../setup/index.js'
import { EXIT, UsageError } from '../errors.js'
import { defaultBootstrapPeers } from '../load-config.js'
import { COMMON_OPTIONS } from '../options.js'
import type { CommandDefinition } from '../command.js'

export const initCommand: CommandDefinition = {
  name: 'init',
  usage: 'idlegrid init --role provider|renter|bootstrap [options]',
  options: {
    role: { type: 'string', valueName: 'ROLE', description: 'provider, renter or bootstrap (required)' },
    'data-dir': { type: 'string', valueName: 'DIR', description: 'node data directory, created owner-only (default ~/.idlegrid, env IDLEGRID_DATA_DIR)' },
    output: { type: 'string', valueName: 'FILE', description: 'where to write the config (default <data dir>/<role>.yaml)' },
    force: { type: 'boolean', description: 'overwrite an existing config file' },
    bootstrap: { type: 'string', multiple: true, valueName: 'MULTIADDR', description: 'seed peers to write into the config (default IDLEGRID_BOOTSTRAP, else bootstrap/peers.json)' },
    region: { type: 'string', valueName: 'REGION', description: 'provider region, e.g. eu-west (default: guessed from the time zone)' },
    'simulate-gpu': { type: 'string', multiple: true, valueName: 'MODEL:VRAM_GB[:COUNT]', description: 'propose for simulated GPUs instead of running nvidia-smi (development)' },
    'nvidia-smi': { type: 'string', valueName: 'PATH', description: 'nvidia-smi binary (default: nvidia-smi on PATH)' },
    ...COMMON_OPTIONS
  },
  details: 'Never overwrites a file without --force. Then: idlegrid doctor --config FILE, and idlegrid ROLE --config FILE.',
  run: async (values, _, out) => {
    if (values.role === undefined) throw new UsageError('idlegrid init: --role provider|renter|bootstrap is required')
    const role = asEnum(values.role, 'role', ROLES)
    const envDir = process.env.IDLEGRID_DATA_DIR
    const dataDir = resolve((values['data-dir'] as string | undefined) ?? (envDir != null && envDir !== '' ? envDir : defaultDataDir()))
    const output = resolve((values.output as string | undefined) ?? join(dataDir, `${role}.yaml`))
    const envBootstrap = process.env.IDLEGRID_BOOTSTRAP
    const bootstrap = values.bootstrap !== undefined
      ? asStringList(values.bootstrap, 'bootstrap')
      : envBootstrap != null && envBootstrap !== '' ? asStringList(envBootstrap, 'IDLEGRID_BOOTSTRAP') : await defaultBootstrapPeers()

    let proposal
    const simulateGpu = values['simulate-gpu'] as string[] | undefined
    const nvidiaSmi = values['nvidia-smi'] as string | undefined
    if (role === 'provider') {
      const gpus = simulateGpu != null ? parseSimulatedGpus(simulateGpu) : await detectGpus({ nvidiaSmi })
      if (gpus.length === 0) throw new Error('nvidia-smi lists no GPUs: nothing to offer (for development: --simulate-gpu MODEL:VRAM_GB)')
      proposal = proposeProvider(gpus, { region: values.region as string | undefined })
    }
    const text = configText({ role, dataDir, bootstrap, proposal, simulateGpu, nvidiaSmi })
    // what is written must load: a bad --bootstrap address is reported now, not at the first start
    resolveConfig({ role, file: asObject(parseYaml(text), '(top level)') })
    await mkdir(dataDir, { recursive: true, mode: 0o700 })
    try {
      // 'wx' fails when the file exists: a config the operator edited is never replaced by accident
      await writeFile(output, text, { mode: 0o600, flag: values.force === true ? 'w' : 'wx' })
    } catch (err: any) {
      if (err?.code === 'EEXIST') throw new UsageError(`${output} already exists; edit it, or run again with --force to replace it`)
      throw err
    }
    out.data({ role, config: output, dataDir, proposal: proposal ?? null })
    out.info(`wrote ${output}`)
    if (proposal != null) out.info(`  ${proposal.gpuSummary} in ${proposal.region}, from ${proposal.priceFloor.toFixed(2)} USD/GPU-hour, tiers ${proposal.tiers.join(', ')}, windows ${proposal.windows.join('; ')}`)
    if (bootstrap.length === 0) out.info('  no bootstrap peers known: add a seed\'s /p2p/ address to bootstrap: in the file')
    out.info(`next: idlegrid doctor --config ${output}`)
    out.info(`then: idlegrid ${role} --config ${output}`)
    return EXIT.ok
  }
}
