import { isCoded } from '../common/index.js'
import { callControl, ControlError } from '../control/index.js'
import { readConfigFile, resolveConfig, asEnum, ROLES, type NodeConfig } from '../config/index.js'
import { defaultBootstrapPeers } from './load-config.js'
import { nodeFlags, type ParsedValues } from './options.js'

export interface OneShotResult {
  /** 'running' when a node on the data directory answered, 'short-lived' when we started one */
  via: 'running' | 'short-lived'
  result: unknown
}

export interface OneShotOptions {
  /** how long a short-lived peer waits to reach its bootstrap peers before answering */
  settleMs?: number
  /** progress events the method sends before its result */
  onEvent?: (event: unknown) => void
  /** bound on the whole call (default 60 s) */
  timeoutMs?: number
  /** checks the config before a short-lived peer starts (nothing started, nothing written): throws to refuse */
  checkShortLived?: (config: NodeConfig) => void
}

/**
 * Runs control `method` on the node running on the data directory, or, when none runs,
 * on a short-lived peer started for the call and stopped after it.
 */
export async function oneShot (
  method: string,
  params: Record<string, unknown>,
  values: ParsedValues,
  opts: OneShotOptions = {}
): Promise<OneShotResult> {
  const config = await oneShotConfig(values)
  try {
    return { via: 'running', result: await callControl(config.dataDir, method, params, { onEvent: opts.onEvent, timeoutMs: opts.timeoutMs ?? 60_000 }) }
  } catch (err) {
    if (!isCoded(err, ControlError, 'ERR_CONTROL_UNAVAILABLE')) throw err
  }
  opts.checkShortLived?.(config)
  // the node's whole stack loads only here: a command answered by a running node stays light
  const { runShortLived } = await import('./short-lived.js')
  return await runShortLived(config, method, params, opts)
}

/** A one-shot command acts as the role its config file names, else as a light renter. */
async function oneShotConfig (values: ParsedValues): Promise<NodeConfig> {
  const file = typeof values.config === 'string' ? await readConfigFile(values.config) : undefined
  const role = file?.role != null ? asEnum(file.role, 'role', ROLES) : 'renter'
  return resolveConfig({
    role,
    file,
    flags: nodeFlags(values),
    env: process.env,
    defaultBootstrap: await defaultBootstrapPeers()
  })
}
