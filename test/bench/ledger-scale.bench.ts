/**
 * Ledger scale (issue 40 item 3): measures what one entry costs on this machine, then projects
 * disk, CPU and bytes per node per day and per year for a provider, a renter and a seed at
 * 10,000 providers and 100 jobs/s (the model: ledger-scale-model.ts, docs/ledger-scale.md).
 *
 * Measured on real LevelDB stores with real signatures, 20 providers and 20 renters, jobs of two
 * entries and one heartbeat summary per 36 jobs of a provider (the model's ratio: 864 jobs and
 * 24 summaries a day): bytes per entry as a range sends them (the encoded SyncResponse, its
 * length prefix included) and as stored (the store's directory after its writes, over entries);
 * process CPU (main thread and verifier workers) per entry to ingest entries one at a time (each
 * its own call, signature and synced write, as an announcement delivers it), in batches of 256
 * with every entry's signature checked (as the ledger bench's ingest), and as synced ranges of
 * 256 that verify under their last entry's signature.
 * IDLEGRID_BENCH_LEDGER_SCALE_JOBS sets the jobs (default 2,000: 4,000+ entries).
 */
import { writeFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { LedgerEntry, SyncResponse } from '../../protocols/ledger.js'
import { signTestJob, type Signer } from '../../src/ledger/dev.js'
import { sealEntry, type LedgerRecord } from '../../src/ledger/entries/entry.js'
import { LedgerIngest } from '../../src/ledger/ingest/ingest.js'
import { tempDir } from '../utils/index.js'
import { summaryBody } from '../ledger/flood-fixtures.js'
import { DEFAULT_SCALE_MODEL, projectLedger, projectionTable, type EntryCosts } from './ledger-scale-model.js'

const JOBS = Number(process.env.IDLEGRID_BENCH_LEDGER_SCALE_JOBS ?? 2_000)
const PAIRS = 20
const BATCH = 256
/** one summary per this many jobs of a provider: 864 jobs to 24 summaries a day */
const JOBS_PER_SUMMARY = 36

async function signer (): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

/** Feeds of 20 providers and 20 renters, each in seq order; every entry in arrival order too. */
async function makeFeeds (): Promise<{ feeds: LedgerRecord[][], arrival: LedgerRecord[], authors: string[] }> {
  const providers = await Promise.all(Array.from({ length: PAIRS }, signer))
  const renters = await Promise.all(Array.from({ length: PAIRS }, signer))
  const feeds = new Map<string, LedgerRecord[]>()
  const arrival: LedgerRecord[] = []
  const append = (author: Signer, kind: LedgerEntry.BodyKind, body: Uint8Array, time: number): void => {
    const id = author.peerId.toString()
    const feed = feeds.get(id) ?? []
    feeds.set(id, feed)
    const prev = feed[feed.length - 1]
    const record = sealEntry(author.key, author.peerId, {
      seq: feed.length + 1,
      prevHash: prev?.hash ?? new Uint8Array(0),
      time,
      kind,
      body
    })
    feed.push(record)
    arrival.push(record)
  }
  const t0 = Date.now() - JOBS * 10 - 60_000
  for (let i = 0; i < JOBS; i++) {
    const provider = providers[i % PAIRS]
    const renter = renters[Math.floor(i / PAIRS) % PAIRS]
    const at = t0 + i * 10
    const job = signTestJob({ provider, renter, at })
    append(provider, LedgerEntry.BodyKind.ATTESTATION, job.attestation, at)
    append(renter, LedgerEntry.BodyKind.RECEIPT, job.receipt, at)
    if ((Math.floor(i / PAIRS) + 1) % JOBS_PER_SUMMARY === 0) {
      append(provider, LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, summaryBody(at), at)
    }
  }
  return { feeds: [...feeds.values()], arrival, authors: [...feeds.keys()] }
}

function cpuMsSince (from: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(from)
  return (used.user + used.system) / 1000
}

async function openStore (path: string, authors: string[]): Promise<LedgerIngest> {
  const key = await generateKeyPair('Ed25519')
  // the authors are this store's trust seeds: every entry is stored, as at a seed
  return await LedgerIngest.open(path, {
    privateKey: key,
    peerId: peerIdFromPrivateKey(key),
    admission: { trustedPeers: authors }
  })
}

function expectAdded (outcomes: Array<{ status: string }>): void {
  const bad = outcomes.find(o => o.status !== 'added')
  if (bad != null) throw new Error(`ingest: ${bad.status}`)
}

/** CPU per entry (µs) and the store's bytes per entry, for one way of ingesting. */
async function measure (
  path: string,
  authors: string[],
  entries: number,
  ingest: (store: LedgerIngest) => Promise<void>
): Promise<{ cpuUs: number, diskBytesPerEntry: number }> {
  const store = await openStore(path, authors)
  const cpu = process.cpuUsage()
  await ingest(store)
  const cpuUs = cpuMsSince(cpu) * 1000 / entries
  const stats = await store.stats()
  if (stats.entries !== entries) throw new Error(`stored ${stats.entries} of ${entries}`)
  await store.close()
  return { cpuUs, diskBytesPerEntry: stats.diskBytes / entries }
}

export default async (): Promise<Record<string, unknown>> => {
  const dir = await tempDir('idlegrid-ledger-scale-')
  try {
    const { feeds, arrival, authors } = await makeFeeds()
    const n = arrival.length
    // on the wire: ranges of 256 of one feed, as sync sends them (length prefix ≤ 4 bytes)
    let wireBytes = 0
    for (const feed of feeds) {
      for (let i = 0; i < feed.length; i += BATCH) {
        wireBytes +=
          SyncResponse.encode({
            entries: { entries: feed.slice(i, i + BATCH).map(r => r.envelope), more: i + BATCH < feed.length }
          }).length + 4
      }
    }
    const mean = (kind: LedgerEntry.BodyKind): number => {
      const of = arrival.filter(r => r.kind === kind)
      return Math.round(of.reduce((s, r) => s + r.envelope.length, 0) / of.length)
    }
    const one = await measure(join(dir.path, 'one'), authors, n, async (store) => {
      for (const record of arrival) expectAdded(await store.ingest([record.envelope]))
    })
    const batched = await measure(join(dir.path, 'batched'), authors, n, async (store) => {
      for (const feed of feeds) {
        for (let i = 0; i < feed.length; i += BATCH) {
          expectAdded(await store.ingest(feed.slice(i, i + BATCH).map(r => r.envelope)))
        }
      }
    })
    const ranged = await measure(join(dir.path, 'ranged'), authors, n, async (store) => {
      for (const feed of feeds) {
        for (let i = 0; i < feed.length; i += BATCH) {
          expectAdded(
            await store.ingest(
              feed.slice(i, i + BATCH).map(r => r.envelope),
              { range: { author: feed[0].author, fromSeq: i + 1 } }
            )
          )
        }
      }
    })
    const costs: EntryCosts = {
      wireBytesPerEntry: Math.round(wireBytes / n),
      diskBytesPerEntry: Math.round(ranged.diskBytesPerEntry),
      ingestOneCpuUs: Math.round(one.cpuUs),
      ingestRangeCpuUs: Math.round(ranged.cpuUs)
    }
    const projection = projectLedger(DEFAULT_SCALE_MODEL, costs)
    const horizon1 = projectLedger({ ...DEFAULT_SCALE_MODEL, horizon: 1 }, costs)
    process.stdout.write(`\nmodel: ${JSON.stringify(DEFAULT_SCALE_MODEL)}\nmeasured: ${JSON.stringify(costs)}\n${projectionTable(projection.roles)}\nhorizon 1:\n${projectionTable(horizon1.roles)}\n`)
    const outDir = join(process.cwd(), 'bench-results')
    await mkdir(outDir, { recursive: true })
    await writeFile(join(outDir, 'ledger-scale-projection.json'), JSON.stringify({ model: DEFAULT_SCALE_MODEL, costs, projection, horizon1 }, null, 2) + '\n')
    return {
      entries: n,
      attestationEnvelopeBytes: mean(LedgerEntry.BodyKind.ATTESTATION),
      receiptEnvelopeBytes: mean(LedgerEntry.BodyKind.RECEIPT),
      summaryEnvelopeBytes: mean(LedgerEntry.BodyKind.HEARTBEAT_SUMMARY),
      wireBytesPerEntry: costs.wireBytesPerEntry,
      diskBytesPerEntryOneAtATime: Math.round(one.diskBytesPerEntry),
      diskBytesPerEntryRanged: costs.diskBytesPerEntry,
      ingestOneAtATimeCpuUsPerEntry: costs.ingestOneCpuUs,
      ingestBatchedEverySignatureCpuUsPerEntry: Math.round(batched.cpuUs),
      ingestRangeCpuUsPerEntry: costs.ingestRangeCpuUs,
      model: DEFAULT_SCALE_MODEL,
      rates: projection.rates,
      projection: projection.roles,
      projectionHorizon1: horizon1.roles
    }
  } finally {
    await dir.cleanup()
  }
}
