/**
 * The renter's side of /idlegrid/usage/1.0.0. A lease's provider proposes its figures for an
 * interval; the renter signs its own instead: each figure at most what its gateway measured
 * for that lease (its running count less what earlier statements cover), the price at most
 * the lease's. A provider that claims more gets nothing for the excess: the renter never signs
 * it, and only co-signed statements count for earnings. Then the provider sends the statement
 * with its own signature added and the renter keeps it in its ledger.
 */
import { equals } from 'uint8arrays/equals'
import { toHex } from '../../common/index.js'
import { decodeStatement, encodeCoSigned, encodeStatement, isInvalidUsage, isUsageOverlap, openCoSignedUsage, signStatement, type LedgerService } from '../../ledger/index.js'
import { countersignedFigures, UsageAccount, type LeaseTerms, type UsageCounts } from './account.js'
import { isUsageError, usageError, type UsageExchangeError, type UsageRefusedCode } from '../errors.js'
import { answerOne } from './frames.js'
import type { UsageFrame } from '../../../protocols/usage.js'
import type { Ed25519PrivateKey, PeerId, Stream } from '@libp2p/interface'

export interface UsageDeskDeps {
  key: Ed25519PrivateKey
  self: PeerId
  ledger: Pick<LedgerService, 'recordUsage'>
  now?: () => number
}

export interface UsageDeskStats {
  countersigned: number
  recorded: number
  refused: Partial<Record<UsageRefusedCode, number>>
}

/** Leases one renter meters at most (a deployment has at most 32 replicas). */
const MAX_ACCOUNTS = 4096

export class UsageDesk {
  private readonly accounts = new Map<string, UsageAccount>()
  readonly stats: UsageDeskStats = { countersigned: 0, recorded: 0, refused: {} }
  private readonly now: () => number

  constructor (private readonly deps: UsageDeskDeps) {
    this.now = deps.now ?? Date.now
  }

  /** Starts metering a lease; `counts` is what the gateway counted through it. */
  open (terms: Omit<LeaseTerms, 'renter'>, counts: () => UsageCounts): UsageAccount {
    const id = toHex(terms.leaseId)
    let account = this.accounts.get(id)
    if (account == null) {
      if (this.accounts.size >= MAX_ACCOUNTS) throw new Error(`already metering ${MAX_ACCOUNTS} leases`)
      account = new UsageAccount({ ...terms, renter: this.deps.self }, counts)
      this.accounts.set(id, account)
    }
    return account
  }

  close (leaseId: Uint8Array): void {
    this.accounts.delete(toHex(leaseId))
  }

  account (leaseId: Uint8Array): UsageAccount | undefined {
    return this.accounts.get(toHex(leaseId))
  }

  /** The answer to one frame from `remote` (a Refused frame is thrown as ServeError ERR_USAGE_EXCHANGE). */
  async answer (frame: UsageFrame, remote: PeerId): Promise<UsageFrame> {
    try {
      if (frame.proposal != null) return this.countersign(frame.proposal.statement, remote)
      if (frame.signed != null) {
        return await this.record(
          encodeCoSigned(frame.signed.statement, frame.signed.providerSignature, frame.signed.renterSignature),
          remote
        )
      }
      throw usageError('PROTOCOL', 'a renter answers Proposal and the co-signed statement only')
    } catch (err) {
      const e = isUsageError(err) ? err : usageError('PROTOCOL', String((err as Error)?.message ?? err))
      this.stats.refused[e.wireCode] = (this.stats.refused[e.wireCode] ?? 0) + 1
      throw e
    }
  }

  private leaseOf (leaseId: Uint8Array, provider: Uint8Array, renter: Uint8Array, remote: PeerId): UsageAccount {
    const account = this.accounts.get(toHex(leaseId))
    // a lease of another provider, or of another renter, answers like no lease
    if (
      account == null ||
      !account.terms.provider.equals(remote) ||
      !equals(provider, remote.toMultihash().bytes) ||
      !equals(renter, this.deps.self.toMultihash().bytes)
    ) {
      throw usageError('NO_LEASE', 'no lease of this id from this provider here')
    }
    return account
  }

  private countersign (bytes: Uint8Array, remote: PeerId): UsageFrame {
    const claim = statementOf(bytes)
    const account = this.leaseOf(claim.leaseId, claim.provider, claim.renter, remote)
    // the same start again: our answer was lost on the way, so it gets the same statement (Ed25519 is deterministic)
    if (account.lastStatement != null && decodeStatement(account.lastStatement).intervalStart === claim.intervalStart) {
      return {
        countersigned: {
          statement: account.lastStatement,
          renterSignature: signStatement(this.deps.key, account.lastStatement)
        }
      }
    }
    if (account.lastEnd != null && claim.intervalStart < account.lastEnd) {
      throw usageError('OVERLAP', `interval starts at ${claim.intervalStart}, before the last countersigned one ends (${account.lastEnd})`)
    }
    const end = Math.min(claim.intervalEnd, this.now())
    if (end <= claim.intervalStart) throw usageError('BAD_STATEMENT', 'the interval has not begun by the renter\'s clock')
    const figures = countersignedFigures(claim, account.figures(claim.intervalStart, end))
    const statement = encodeStatement({
      leaseId: claim.leaseId,
      provider: claim.provider,
      renter: claim.renter,
      intervalStart: claim.intervalStart,
      intervalEnd: end,
      ...figures,
      priceMicroUsdPerGpuHour: Math.min(claim.priceMicroUsdPerGpuHour, account.terms.priceMicroUsdPerGpuHour)
    })
    const renterSignature = signStatement(this.deps.key, statement)
    // committed: the next statement starts here, whether or not the provider signs this one
    account.settle(decodeStatement(statement), statement)
    this.stats.countersigned++
    return { countersigned: { statement, renterSignature } }
  }

  private async record (body: Uint8Array, remote: PeerId): Promise<UsageFrame> {
    let verified
    try {
      verified = await openCoSignedUsage(body)
    } catch (err) {
      throw usageRefusal(err)
    }
    const account = this.leaseOf(verified.usage.leaseId, verified.usage.provider, verified.usage.renter, remote)
    if (account.lastStatement == null || !equals(account.lastStatement, verified.statement)) {
      throw usageError('NOT_COUNTERSIGNED', 'not the statement this renter countersigned last for the lease')
    }
    try {
      await this.deps.ledger.recordUsage(body)
    } catch (err) {
      // sent twice: already held
      if (!(isUsageOverlap(err) && err.reason === 'duplicate')) throw usageRefusal(err)
    }
    this.stats.recorded++
    return { recorded: {} }
  }
}

function statementOf (bytes: Uint8Array): ReturnType<typeof decodeStatement> {
  try {
    return decodeStatement(bytes)
  } catch (err) {
    throw usageRefusal(err)
  }
}

/** A ledger refusal as the frame's code. */
export function usageRefusal (err: unknown): UsageExchangeError {
  if (isInvalidUsage(err)) return usageError(err.reason.endsWith('signature') ? 'BAD_SIGNATURE' : 'BAD_STATEMENT', `${err.reason}: ${err.message}`)
  if (isUsageOverlap(err)) return usageError('OVERLAP', err.message)
  return usageError('PROTOCOL', String((err as Error)?.message ?? err))
}

/** The stream handler of /idlegrid/usage/1.0.0 for a desk (give it to registrar.handle or libp2p.handle). */
export function usageHandler (
  desk: UsageDesk,
  timeoutMs = 10_000
): (data: { stream: Stream, connection: { remotePeer: PeerId } }) => void {
  return ({ stream, connection }) => {
    void answerOne(stream, connection.remotePeer, async (frame, remote) => await desk.answer(frame, remote), timeoutMs)
  }
}
