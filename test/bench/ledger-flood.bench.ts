/**
 * Ledger growth per junk entry (issue 12 item 6): 1000 valid ~27 KiB equivocation-proof
 * entries from throwaway keys ingested by a store that admits by standing (the node's store)
 * and, for comparison, by one that stores every verified entry (the behaviour before the
 * quarantine). Figures: bytes stored and LevelDB directory growth per junk entry, quarantine
 * memory, and ingest time per junk entry.
 */
import { join } from 'node:path'
import { LedgerIngest, type LedgerIngestOptions } from '../../src/ledger/ingest/ingest.js'
import { junkProofEntry, newSigner } from '../ledger/flood-fixtures.js'
import { tempDir } from '../utils/index.js'

const JUNK = 1000

async function growth (path: string, junk: Uint8Array[], admission: LedgerIngestOptions['admission']): Promise<{ storedPerEntry: number, diskPerEntry: number, quarantineBytes: number, msPerEntry: number }> {
  const self = await newSigner()
  const ledger = await LedgerIngest.open(path, { privateKey: self.key, peerId: self.peerId, admission })
  try {
    const before = await ledger.stats()
    const started = performance.now()
    for (let i = 0; i < junk.length; i += 50) await ledger.ingest(junk.slice(i, i + 50))
    const ms = performance.now() - started
    const after = await ledger.stats()
    const stored = ledger.store.allHeads().reduce((sum, h) => sum + h.bytes, 0)
    return {
      storedPerEntry: stored / junk.length,
      diskPerEntry: (after.diskBytes - before.diskBytes) / junk.length,
      quarantineBytes: after.quarantine?.bytes ?? 0,
      msPerEntry: ms / junk.length
    }
  } finally {
    await ledger.close()
  }
}

export default async function (): Promise<Record<string, unknown>> {
  const dir = await tempDir('idlegrid-bench-flood-')
  try {
    const junk = (await Promise.all(Array.from({ length: JUNK }, junkProofEntry))).map(r => r.envelope)
    const entryBytes = junk.reduce((sum, e) => sum + e.byteLength, 0) / JUNK
    const guarded = await growth(join(dir.path, 'guarded'), junk, {})
    const open = await growth(join(dir.path, 'open'), junk, undefined)
    const round = (x: number): number => Math.round(x * 10) / 10
    const round2 = (x: number): number => Math.round(x * 100) / 100
    return {
      junkEntries: JUNK,
      junkEntryBytes: Math.round(entryBytes),
      growthPerJunkEntryStoredBytes: round(guarded.storedPerEntry),
      growthPerJunkEntryDiskBytes: round(guarded.diskPerEntry),
      quarantineMemoryBytes: guarded.quarantineBytes,
      ingestMsPerJunkEntry: round2(guarded.msPerEntry),
      withoutQuarantineGrowthPerJunkEntryDiskBytes: round(open.diskPerEntry),
      withoutQuarantineIngestMsPerJunkEntry: round2(open.msPerEntry)
    }
  } finally {
    await dir.cleanup()
  }
}
