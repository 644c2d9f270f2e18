/**
 * The attacker's ledger tools, used inside its own process: its node's ledger service, entries
 * of its own feed signed as its store would (or as its store would refuse) and put straight on
 * the wire, and one real job run through its own submit service on whichever honest provider
 * wins the auction (the attacker is then a genuine renter of that provider).
 */
import { TOPIC } from '../../../protocols/ids.js'
import { LedgerEntry } from '../../../protocols/ledger.js'
import { sealEntry, decodeStoredEntry, type LedgerRecord } from '../../../src/ledger/entries/entry.js'
import { SUBMIT_SERVICE, type SubmitService } from '../../../src/submit/service.js'
import { waitFor } from '../../utils/wait.js'
import { equals } from 'uint8arrays/equals'
import type { LedgerService } from '../../../src/ledger/service/ledger-service.js'
import type { IdlegridNode } from '../../../src/node/index.js'
import type { JobSummary } from '../../../src/submit/summary.js'

export const ledgerOf = (node: IdlegridNode): LedgerService =>
  (node.libp2p.services as unknown as { ledger: LedgerService }).ledger

/** An envelope onto the ledger topic, whatever the attacker's own store thinks of it. */
export async function publishRaw (node: IdlegridNode, envelope: Uint8Array): Promise<void> {
  await node.libp2p.services.pubsub.publish(TOPIC.ledger, envelope)
}

/** An entry of another author the attacker holds and relays (so sync serves it too). */
export async function carry (node: IdlegridNode, envelope: Uint8Array): Promise<void> {
  await ledgerOf(node).ingest.ingestOne(envelope)
  await publishRaw(node, envelope).catch(() => {})
}

/** The next entry of the node's own feed, at any time it likes (its store is not asked). */
export function nextEntry (
  node: IdlegridNode,
  kind: LedgerEntry.BodyKind,
  body: Uint8Array,
  time: number
): LedgerRecord {
  const head = ledgerOf(node).store.head(node.peerId.toString())
  return sealEntry(node.privateKey, node.peerId, {
    seq: (head?.seq ?? 0) + 1,
    prevHash: head?.hash ?? new Uint8Array(0),
    time,
    kind,
    body
  })
}

/** The entry of `authorId`'s feed whose body is `body`, once the attacker's store holds it. */
export async function entryWithBody (
  node: IdlegridNode,
  authorId: string,
  body: Uint8Array,
  timeoutMs = 20_000
): Promise<LedgerRecord> {
  const store = ledgerOf(node).store
  let found: LedgerRecord | undefined
  await waitFor(async () => {
    const head = store.head(authorId)
    if (head == null) return false
    const { entries } = await store.range(head.author, 1, 1000)
    found = entries.map(decodeStoredEntry).find(r => equals(LedgerEntry.decode(r.payload).body, body))
    return found != null
  }, { timeoutMs, intervalMs: 200, what: `an entry of ${authorId} with the job's body` })
  return found as LedgerRecord
}

/** A trivial real job (one-second auction, /bin/true) through the node's own submit service. */
export async function runRealJob (node: IdlegridNode, name: string, baseDir: string): Promise<JobSummary & { attestation: NonNullable<JobSummary['attestation']>, receipt: NonNullable<JobSummary['receipt']> }> {
  const submit = (node.libp2p.services as unknown as Record<string, SubmitService>)[SUBMIT_SERVICE] as SubmitService
  const summary = await submit.submit({
    spec: { name, tier: 'silver', workload: 'evaluation', runtime: { command: ['/bin/true'] }, estimatedMinutes: 1, auction: { bidWindowMs: 1000, acceptTimeoutMs: 3000 } },
    baseDir,
    maxAttempts: 1
  })
  if (summary.status !== 'ok' || summary.attestation == null || summary.receipt == null) throw new Error(`the attacker's real job did not complete: ${summary.status} ${summary.detail ?? ''}`)
  return summary as any
}
