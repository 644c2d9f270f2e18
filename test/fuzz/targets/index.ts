/** Every fuzz target, by name. */
import { dhtTargets } from './dht.js'
import { execTargets } from './exec.js'
import { fileTargets } from './files.js'
import { gossipTargets } from './gossip.js'
import { heartbeatStreamTargets } from './heartbeat-stream.js'
import { kadProvidersTargets } from './kad-providers.js'
import { ledgerTargets } from './ledger.js'
import { serviceTargets } from './services.js'
import { wireTargets } from './wire.js'
import type { TargetFactory } from '../target.js'

export const TARGETS: readonly TargetFactory[] = [
  ...wireTargets,
  ...gossipTargets,
  ...heartbeatStreamTargets,
  ...execTargets,
  ...ledgerTargets,
  ...dhtTargets,
  ...kadProvidersTargets,
  ...fileTargets,
  ...serviceTargets
]

export function targetByName (name: string): TargetFactory {
  const found = TARGETS.find(t => t.name === name)
  if (found == null) throw new Error(`no fuzz target "${name}" (known: ${TARGETS.map(t => t.name).join(', ')})`)
  return found
}
