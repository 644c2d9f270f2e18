/**
 * The one rule about a node without bootstrap peers, and what to tell its user: `idlegrid
 * doctor` warns with it, `idlegrid submit` refuses to auction with it.
 */
import type { NodeConfig } from './config.js'

export interface BootstrapAdvice {
  /** what is wrong, one line */
  problem: string
  /** how to give a bootstrap peer, one line */
  fix: string
}

/** Undefined when the node has bootstrap peers, or is a seed node (which needs none). */
export function missingBootstrap (config: Pick<NodeConfig, 'role' | 'bootstrap'>): BootstrapAdvice | undefined {
  if (config.bootstrap.length > 0 || config.role === 'bootstrap') return undefined
  return {
    problem: 'no bootstrap peers configured: this node will only see peers that dial it',
    fix: 'give --bootstrap /dns4/HOST/tcp/4001/p2p/PEER_ID, IDLEGRID_BOOTSTRAP or bootstrap: in the config'
  }
}
