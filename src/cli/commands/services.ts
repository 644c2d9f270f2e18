/**
 * `idlegrid deploy FILE` and `idlegrid services ls|status|scale|stop`: always-on services on
 * the renter node running on the data directory (a deployment lives in that node: its
 * replicas' leases and its gateway stop with it, so there is no short-lived peer here).
 */
import { resolve } from 'node:path'
import { resolveConfig } from '../../config/index.js'
import { isCoded } from '../../common/index.js'
import { callControl, ControlError } from '../../control/index.js'
import { loadServiceFile } from '../../serve/index.js'
import { readJobFile } from '../../market/index.js'
import { shortPeerId } from '../../common/index.js'
import { EXIT, UsageError } from '../errors.js'
import { COMMON_OPTIONS, NODE_OPTIONS, nodeFlags, type ParsedValues } from '../options.js'
import type { CommandDefinition } from '../command.js'
import type { Output } from '../output.js'

async function call (
  values: ParsedValues,
  method: string,
  params: Record<string, unknown>,
  opts: { timeoutMs?: number, onEvent?: (e: unknown) => void } = {}
): Promise<any> {
  const { dataDir } = resolveConfig({ role: 'renter', flags: nodeFlags(values), env: process.env })
  try {
    return await callControl(dataDir, method, params, { timeoutMs: opts.timeoutMs ?? 30_000, onEvent: opts.onEvent })
  } catch (err) {
    if (isCoded(err, ControlError, 'ERR_CONTROL_UNAVAILABLE')) throw new UsageError(`no renter node runs on ${dataDir}: start one (idlegrid renter) and deploy to it`)
    throw err
  }
}

function printStatus (s: any, out: Output): void {
  out.info(`${String(s.name)}: ${String(s.ready)}/${String(s.size)} replicas ready, gateway ${String(s.url)}`)
  for (const r of s.replicas ?? []) {
    out.info(`  ${String(r.id).slice(0, 8)} on ${shortPeerId(String(r.provider))} ${String(r.region || 'any region').padEnd(10)} ${String(r.state).padEnd(8)} served ${String(r.served)}, failed ${String(r.failed)}${r.ewmaMs != null ? `, ${Number(r.ewmaMs).toFixed(1)} ms` : ''}`)
  }
}

export const deployCommand: CommandDefinition = {
  name: 'deploy',
  usage: 'idlegrid deploy SERVICE.yaml [--wait S] [options]',
  options: { wait: { type: 'string', valueName: 'S', description: 'wait up to S seconds for every replica to be ready (default 120)' }, ...NODE_OPTIONS, ...COMMON_OPTIONS },
  allowPositionals: true,
  details: 'Needs a renter node running on the data directory. Prints the gateway URL; exit 0 when every replica is ready, 1 otherwise (the deployment keeps trying).',
  run: async (values, positionals, out) => {
    const [file] = positionals
    if (file == null) throw new UsageError('idlegrid deploy: name a service file')
    await loadServiceFile(file) // validate here first: a bad field is named before any node is asked
    const wait = Number(values.wait ?? 120)
    if (!(wait >= 0 && wait <= 600)) throw new UsageError('--wait must be 0 to 600 seconds')
    const status = await call(values, 'services.deploy', { spec: await readJobFile(file), baseDir: resolve(file, '..'), waitMs: wait * 1000 }, {
      timeoutMs: wait * 1000 + 30_000,
      onEvent: (e: any) => { out.info(`  ${String(e.type)}${e.provider != null ? ` ${shortPeerId(String(e.provider))}` : ''}${e.detail != null ? `: ${String(e.detail)}` : ''}`) }
    })
    out.data(status)
    printStatus(status, out)
    return status.ready === status.size ? EXIT.ok : EXIT.failure
  }
}

const SUBCOMMANDS = ['ls', 'status', 'scale', 'stop'] as const

export const servicesCommand: CommandDefinition = {
  name: 'services',
  usage: 'idlegrid services ls | status NAME | scale NAME N | stop NAME [options]',
  options: { ...NODE_OPTIONS, ...COMMON_OPTIONS },
  allowPositionals: true,
  run: async (values, positionals, out) => {
    const [sub, name, n] = positionals
    if (sub == null || !(SUBCOMMANDS as readonly string[]).includes(sub)) throw new UsageError(`idlegrid services: say one of ${SUBCOMMANDS.join(', ')}`)
    if (sub !== 'ls' && name == null) throw new UsageError(`idlegrid services ${sub}: name the service`)
    if (sub === 'ls') {
      const ls = await call(values, 'services.ls', {})
      out.data(ls)
      if (ls.services.length === 0) out.info('no services deployed')
      for (const s of ls.services) out.info(`${String(s.name).padEnd(20)} ${String(s.ready)}/${String(s.size)} ready  ${String(s.url)}`)
      return EXIT.ok
    }
    if (sub === 'stop') {
      out.data(await call(values, 'services.stop', { name }))
      out.info(`${String(name)} stopped`)
      return EXIT.ok
    }
    if (sub === 'scale' && n == null) throw new UsageError('idlegrid services scale NAME N: say how many replicas')
    const status = await call(values, `services.${sub}`, sub === 'scale' ? { name, replicas: Number(n) } : { name })
    out.data(status)
    printStatus(status, out)
    return EXIT.ok
  }
}
