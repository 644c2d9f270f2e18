/**
 * What the ledger adds to a node (the composition root merges it in), and how it is joined
 * to the other services once the node is built: provider attestations from exec go into our
 * feed, renter receipts too, and the renter's auction reads our reputation.
 */

import { isAvailable, type ProviderProfile } from '../capability/index.js'
import { ledgerService, type LedgerService } from './service.js'
import type { NodeConfig } from '../config/index.js'
import type { Logger } from '@libp2p/interface'

/** The ledger's name in the node's service map. */
export const LEDGER_SERVICE = 'ledger'
/** What the ledger service provides, for other services' `serviceDependencies`. */
export const LEDGER_CAPABILITY = '@idlegrid/ledger'

/** Ledger options a role command may set (from its flags). */
export interface LedgerBuildOptions {
  /** offer ledger.appendTestJob and ledger.appendSummary on the control socket (--dev-ledger-methods) */
  devMethods?: boolean
  /** providers: ms between heartbeat-summary entries (--ledger-summary-seconds; default 1 h) */
  summaryIntervalMs?: number
}

export interface LedgerExtensionOptions extends LedgerBuildOptions {
  config: NodeConfig
  /** a provider's profile: its availability windows bound the uptime it reports */
  profile?: ProviderProfile
  /** a provider's GPU slots, for the busy share in heartbeat summaries */
  capacity?: { totalSlots: () => number, freeSlots: () => number }
}

export function ledgerExtensions (opts: LedgerExtensionOptions): Record<string, (components: any) => unknown> {
  const availability = opts.profile?.policy.availability
  const capacity = opts.capacity
  return {
    [LEDGER_SERVICE]: ledgerService({
      dataDir: opts.config.dataDir,
      role: opts.config.role,
      heartbeatMs: opts.config.heartbeatMs,
      summaryIntervalMs: opts.summaryIntervalMs,
      devMethods: opts.devMethods,
      isAvailable: availability == null ? undefined : (at) => isAvailable(availability.windows, availability.timeZone, at),
      slots: capacity == null ? undefined : () => ({ total: capacity.totalSlots(), busy: Math.max(0, capacity.totalSlots() - capacity.freeSlots()) })
    })
  }
}

interface AttestationSource { onAttestation: (handler: (event: { attestation: { envelope: Uint8Array } }) => void) => () => void }
interface ReceiptSource { onRenterReceipt: (handler: (event: { receipt: { envelope: Uint8Array } }) => void) => () => void }
interface ReputationSink { setReputation: (source: { reliability: (peerId: string) => number, isExcluded?: (peerId: string) => boolean }) => void }

/**
 * Joins the ledger to the services present: exec's provider attestations and (when exec
 * offers it) the renter's receipts become entries of our feed; the renter's auction uses
 * our reputation. Returns a function that undoes the hooks.
 */
export function connectLedger (services: Record<string, unknown>, log?: Logger): () => void {
  const ledger = services[LEDGER_SERVICE] as LedgerService | undefined
  if (ledger == null) return () => {}
  const undo: Array<() => void> = []
  const record = (what: string, write: () => Promise<unknown>): void => {
    write().catch((err: unknown) => { log?.error('%s not recorded in the ledger: %e', what, err) })
  }
  const exec = services.exec as Partial<AttestationSource> | undefined
  if (typeof exec?.onAttestation === 'function') {
    undo.push(exec.onAttestation((event) => { record('attestation', async () => await ledger.recordAttestation(event.attestation.envelope)) }))
  }
  const execRenter = services.execRenter as Partial<ReceiptSource> | undefined
  if (typeof execRenter?.onRenterReceipt === 'function') {
    undo.push(execRenter.onRenterReceipt((event) => { record('receipt', async () => await ledger.recordReceipt(event.receipt.envelope)) }))
  }
  const renter = services.marketRenter as Partial<ReputationSink> | undefined
  if (typeof renter?.setReputation === 'function') renter.setReputation(ledger)
  return () => { for (const u of undo) u() }
}
