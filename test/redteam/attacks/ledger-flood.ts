/**
 * Issue 12 attack 4, one peer floods every ledger: `--entries` junk entries (default 1000),
 * each a valid ~27 KiB equivocation proof carried as the first entry of a throwaway key's
 * feed, published on the ledger topic as fast as gossip takes them. It reports when all are
 * published and keeps its node up (gossip still draining) until stopped.
 */
import { junkProofEntry } from '../../ledger/flood-fixtures.js'
import { numberOption, untilAborted, type Attack } from './attack.js'
import { publishRaw } from './ledger-tools.js'

export const ledgerFlood: Attack = {
  summary: 'junk equivocation-proof entries (~27 KiB each) from throwaway keys onto the ledger topic',
  play: async ({ nodes: [me], options, signal, log, report }) => {
    if (me == null) throw new Error('no node')
    const entries = numberOption(options, 'entries', 1000)
    let published = 0
    let bytes = 0
    for (let i = 0; i < entries && !signal.aborted; i++) {
      const junk = await junkProofEntry()
      await publishRaw(me, junk.envelope).then(() => { published++; bytes += junk.envelope.byteLength }, () => {})
    }
    log(`${published} junk entries published (${(bytes / 1e6).toFixed(1)} MB)`)
    report({ flooded: true, published, bytes })
    await untilAborted(signal)
    return { published, bytes }
  }
}
