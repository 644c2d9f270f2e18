import { readFile } from 'node:fs/promises'
import { readConfigFile, resolveConfig, ConfigError, type NodeConfig, type Role } from '../config/index.js'
import { nodeFlags, type ParsedValues } from './options.js'

const DEFAULT_PEERS_FILE = new URL('../../../bootstrap/peers.json', import.meta.url)

/** The shipped default bootstrap list (bootstrap/peers.json); empty when missing. */
export async function defaultBootstrapPeers (): Promise<string[]> {
  let text: string
  try {
    text = await readFile(DEFAULT_PEERS_FILE, 'utf8')
  } catch {
    return []
  }
  const doc = JSON.parse(text)
  if (!Array.isArray(doc?.peers) || doc.peers.some((p: unknown) => typeof p !== 'string')) {
    throw new ConfigError('bootstrap/peers.json: peers', 'a list of multiaddr strings')
  }
  return doc.peers
}

/** Config for `role` from --config, the environment, flags and defaults. */
export async function loadNodeConfig (role: Role, values: ParsedValues): Promise<NodeConfig> {
  const file = typeof values.config === 'string' ? await readConfigFile(values.config) : undefined
  return resolveConfig({
    role,
    file,
    flags: nodeFlags(values),
    env: process.env,
    defaultBootstrap: await defaultBootstrapPeers()
  })
}
