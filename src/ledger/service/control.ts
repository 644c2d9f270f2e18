/**
 * The ledger's methods on the node's control socket (`idlegrid ledger …`, `idlegrid
 * reputation`): parameters checked and bounded here, the work done by the service.
 */

import { peerIdFromString } from '@libp2p/peer-id'
import { ControlError, type ControlHandler } from '../../control/index.js'
import { MAX_FEED_VIEW } from './views.js'
import type { LedgerService } from './ledger-service.js'
import type { TestOutcome } from '../dev.js'

/** Development methods (--dev-ledger-methods): jobs' entries signed by in-memory keys, a summary now. */
export interface DevMethods {
  appendTestJobs: (opts: {
    count: number
    renterIndex: number
    outcome: TestOutcome
    preemptible: boolean
  }) => Promise<unknown>
  appendSummary: () => Promise<{ seq: number } | undefined>
}

const OUTCOMES: readonly string[] = ['ok', 'failed', 'bad-output', 'timeout', 'preempted'] satisfies TestOutcome[]

export function ledgerControlHandlers (ledger: LedgerService, dev?: DevMethods): Record<string, ControlHandler> {
  const handlers: Record<string, ControlHandler> = {
    'ledger.status': async (params) => {
      // a short-lived peer may first catch up with its peers
      if (params.sync === true) await ledger.syncNow({ timeoutMs: numberParam(params.timeoutMs, { name: 'timeoutMs', fallback: 10_000, min: 100, max: 120_000 }) })
      return await ledger.status()
    },
    'ledger.show': async (params) => await ledger.show(peerParam(params.peer), numberParam(params.limit, { name: 'limit', fallback: 20, min: 1, max: MAX_FEED_VIEW })),
    'ledger.earnings': async (params) => ledger.earnings(params.peer == null ? undefined : peerParam(params.peer)),
    'ledger.flush': async (params) => await ledger.flush({ timeoutMs: numberParam(params.timeoutMs, { name: 'timeoutMs', fallback: 10_000, min: 0, max: 120_000 }) }),
    'ledger.sync': async (params) => await ledger.syncNow({ timeoutMs: numberParam(params.timeoutMs, { name: 'timeoutMs', fallback: 30_000, min: 100, max: 120_000 }) }),
    reputation: async (params) => {
      if (params.sync === true) await ledger.syncNow({ timeoutMs: numberParam(params.timeoutMs, { name: 'timeoutMs', fallback: 10_000, min: 100, max: 120_000 }) })
      const now = numberParam(params.now, { name: 'now', fallback: Date.now(), min: 0, max: Number.MAX_SAFE_INTEGER })
      if (params.peer != null) {
        // one provider: its reputation, and why (direct, transitive and discounted evidence)
        const { reputation, ...explain } = ledger.explainReputation(peerParam(params.peer), now)
        return [{ ...reputation, explain }]
      }
      const rows = ledger
        .reputations(now)
        .map(({ counterparties, ...rest }) => ({ ...rest, counterparties: counterparties.length }))
      if (params.explain !== true) return rows
      // every provider with why (its renters left out: `reputation PEER` lists them)
      return rows.map(row => {
        const { reputation: _, renters: __, ...explain } = ledger.explainReputation(row.peerId, now)
        return { ...row, explain }
      })
    }
  }
  if (dev != null) {
    handlers['ledger.appendTestJob'] = async (params) => {
      const count = numberParam(params.count, { name: 'count', fallback: 1, min: 1, max: 500 })
      const renterIndex = numberParam(params.renter, { name: 'renter', fallback: 0, min: 0, max: 99 })
      const outcome = params.outcome ?? 'ok'
      if (typeof outcome !== 'string' || !OUTCOMES.includes(outcome)) throw new ControlError('ERR_BAD_PARAMS', 'outcome must be ok, failed, bad-output, timeout or preempted')
      return await dev.appendTestJobs({
        count,
        renterIndex,
        outcome: outcome as TestOutcome,
        preemptible: params.preemptible === true
      })
    }
    handlers['ledger.appendSummary'] = async () => {
      const record = await dev.appendSummary()
      return { seq: record?.seq ?? null }
    }
  }
  return handlers
}

function peerParam (value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new ControlError('ERR_BAD_PARAMS', 'a peer id is required')
  try {
    return peerIdFromString(value).toString()
  } catch {
    throw new ControlError('ERR_BAD_PARAMS', `"${value.slice(0, 80)}" is not a peer id`)
  }
}

/** A number parameter's name (for the error), its value when absent, and its bounds. */
interface NumberParam {
  name: string
  fallback: number
  min: number
  max: number
}

function numberParam (value: unknown, { name, fallback, min, max }: NumberParam): number {
  if (value == null) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) throw new ControlError('ERR_BAD_PARAMS', `${name} must be a number from ${min} to ${max}`)
  return Math.floor(value)
}
