// a fresh node syncs FEEDS one-entry feeds from a holder, with ranges requests (MODE=ranges) or as from a node from before (MODE=before)
import { join } from 'node:path'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { LedgerEntry } from '../dist/protocols/ledger.js'
import { resolveConfig } from '../dist/src/config/index.js'
import { sealEntry } from '../dist/src/ledger/entries/entry.js'
import { ledgerService } from '../dist/src/ledger/service/ledger-node.js'
import { createNode } from '../dist/src/node/index.js'
import { signers, idOf } from '../dist/test/ledger/feeds.js'
import { summaryBody } from '../dist/test/ledger/flood-fixtures.js'
import { wrapSync } from '../dist/test/ledger/sync-responders.js'

const FEEDS = Number(process.env.FEEDS ?? 2000)
const dir = mkdtempSync(join(tmpdir(), 'many-feeds-'))
const authors = await signers(FEEDS)
const start = async (name, bootstrap) => {
  const config = resolveConfig({ role: 'bootstrap', flags: { dataDir: join(dir, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: bootstrap ? [bootstrap.libp2p.getMultiaddrs()[0].toString()] : [], heartbeatSeconds: 60 } })
  return await createNode(config, { services: { ledger: ledgerService({ dataDir: config.dataDir, role: 'renter', summaryIntervalMs: 0, syncIntervalMs: 3_600_000, trustedPeers: authors.map(idOf) }) } })
}
const holder = await start('holder')
const time = Date.now() - 60_000
const PER = Number(process.env.PER ?? 1)
for (const a of authors) {
  const feed = []; let prev = new Uint8Array(0)
  for (let seq = 1; seq <= PER; seq++) { const r = sealEntry(a.key, a.peerId, { seq, prevHash: prev, time: time + seq, kind: LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, body: summaryBody(time + seq - 1000) }); prev = r.hash; feed.push(r.envelope) }
  const out = await holder.libp2p.services.ledger.ingest.ingest(feed, { range: { author: a.peerId.toMultihash().bytes, fromSeq: 1 } })
  if (out.some(o => o.status !== 'added')) throw new Error('ingest ' + out.find(o => o.status !== 'added').status)
}
for (const mode of (process.env.MODES ?? 'ranges,before').split(',')) {
  const counts = await wrapSync(holder, { beforeRanges: mode === 'before' })
  const t0 = performance.now(); const cpu = process.cpuUsage()
  const fresh = await start('fresh-' + mode + '-' + Math.random().toString(36).slice(2), holder)
  const held = () => fresh.libp2p.services.ledger.store.allHeads().reduce((s, h) => s + h.seq, 0)
  while (held() < FEEDS * PER) { await new Promise(r => setTimeout(r, 20)); if (performance.now() - t0 > 180_000) break }
  const ms = performance.now() - t0; const c = process.cpuUsage(cpu)
  console.log(`${mode}: ${held()} of ${FEEDS * PER} entries in ${Math.round(ms)} ms; requests: ${counts.heads} heads, ${counts.range} range, ${counts.ranges} ranges (${counts.rangesOfRanges} ranges in them); process CPU ${Math.round((c.user + c.system) / 1000)} ms`)
  await fresh.stop()
}
await holder.stop()
rmSync(dir, { recursive: true })
