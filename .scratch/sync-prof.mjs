// fresh node syncs N entries from a holder process, ROUNDS times; PROF=k profiles round k (main thread)
import { Session } from 'node:inspector/promises'
import { writeFileSync, mkdtempSync, rmSync, cpSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { LedgerEntry } from '../dist/protocols/ledger.js'
import { signTestJob } from '../dist/src/ledger/dev.js'
import { sealEntry } from '../dist/src/ledger/entries/entry.js'
import { LedgerIngest } from '../dist/src/ledger/ingest/ingest.js'
import { threadCpuMs, threadNames, threadSplit } from '../dist/test/bench/process-usage.js'
import { VERIFIER_THREAD_NAME } from '../dist/src/identity/verify-batch.js'
import { resolveConfig } from '../dist/src/config/index.js'
import { ledgerService } from '../dist/src/ledger/service/ledger-node.js'
import { createNode } from '../dist/src/node/index.js'
import { startChildPeer } from '../dist/test/bench/child-peer.js'

const ENTRIES = Number(process.env.N ?? 20000)
const PAIRS = Math.max(20, Math.ceil(ENTRIES / 5000))
const signer = async () => { const key = await generateKeyPair('Ed25519'); return { key, peerId: peerIdFromPrivateKey(key) } }
const providers = await Promise.all(Array.from({ length: PAIRS }, signer))
const renters = await Promise.all(Array.from({ length: PAIRS }, signer))
const feeds = new Map()
const append = (author, kind, body, time) => {
  const id = author.peerId.toString()
  let feed = feeds.get(id); if (feed == null) feeds.set(id, feed = { seq: 0, entries: [] })
  const record = sealEntry(author.key, author.peerId, { seq: feed.seq + 1, prevHash: feed.prev ?? new Uint8Array(0), time, kind, body })
  feed.seq++; feed.prev = record.hash; feed.entries.push(record.envelope)
}
const now = Date.now()
for (let i = 0; i < ENTRIES / 2; i++) {
  const job = signTestJob({ provider: providers[i % PAIRS], renter: renters[(i * 7) % PAIRS], at: now - 1000 })
  append(providers[i % PAIRS], LedgerEntry.BodyKind.ATTESTATION, job.attestation, now - 1000)
  append(renters[(i * 7) % PAIRS], LedgerEntry.BodyKind.RECEIPT, job.receipt, now - 1000)
}
const authors = [...feeds.keys()]
const dir = mkdtempSync(join(tmpdir(), 'sync-prof-'))
{
  const key = await generateKeyPair('Ed25519')
  const store = await LedgerIngest.open(join(dir, 'holder', 'ledger'), { privateKey: key, peerId: peerIdFromPrivateKey(key) })
  for (const f of feeds.values()) for (let i = 0; i < f.entries.length; i += 1024) await store.ingest(f.entries.slice(i, i + 1024))
  await store.close()
}
feeds.clear()
setFlagsFromString('--expose-gc'); const gc = runInNewContext('gc'); gc()
const holder = await startChildPeer(new URL('../dist/test/bench/ledger-holder.js', import.meta.url).pathname, [join(dir, 'holder')], 'holder')
const session = new Session(); session.connect()
const held = n => n.libp2p.services.ledger.store.allHeads().reduce((s, h) => s + h.seq, 0)
for (let round = 0; round < Number(process.env.ROUNDS ?? 3); round++) {
  gc()
  const prof = process.env.PROF != null && Number(process.env.PROF) === round
  if (prof) { await session.post('Profiler.enable'); await session.post('Profiler.setSamplingInterval', { interval: 200 }); await session.post('Profiler.start') }
  const hprof = process.env.HPROF != null && Number(process.env.HPROF) === round
  if (hprof) { await session.post('HeapProfiler.enable'); await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: process.env.ALL != null, includeObjectsCollectedByMinorGC: process.env.ALL != null }) }
  const h0 = await holder.cpuMs()
  const t0 = performance.now(); const cpu = process.cpuUsage(); const threads = threadCpuMs()
  const config = resolveConfig({ role: 'bootstrap', flags: { dataDir: join(dir, 'fresh' + round), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [holder.ready.addr], heartbeatSeconds: 5 } })
  const node = await createNode(config, { services: { ledger: ledgerService({ dataDir: config.dataDir, role: 'renter', summaryIntervalMs: 0, syncIntervalMs: 3600_000, trustedPeers: authors }) } })
  let first
  while (held(node) < ENTRIES) { if (first == null && held(node) > 0) first = performance.now() - t0; await new Promise(r => setTimeout(r, 5)) }
  const ms = performance.now() - t0; const c = process.cpuUsage(cpu)
  const split = threadSplit(threads, threadCpuMs(), process.pid, { name: VERIFIER_THREAD_NAME, names: threadNames() })
  const hc = await holder.cpuMs() - h0
  if (prof) { const { profile } = await session.post('Profiler.stop'); writeFileSync('/tmp/sync.cpuprofile', JSON.stringify(profile)) }
  if (hprof) { gc(); const { profile } = await session.post('HeapProfiler.getSamplingProfile'); await session.post('HeapProfiler.stopSampling'); writeFileSync('/tmp/sync.heapprofile', JSON.stringify(profile)) }
  await node.stop()
  const names = threadNames(); const after = threadCpuMs(); const byName = new Map()
  for (const [tid, ms] of after) { const n = tid === process.pid ? 'main' : (names.get(tid) ?? '?').replace(/[0-9]+$/, ''); byName.set(n, (byName.get(n) ?? 0) + ms - (threads.get(tid) ?? 0)) }
  const us = x => (x * 1000 / ENTRIES).toFixed(1)
  console.log(`round ${round}: ${Math.round(ms)} ms (first ${Math.round(first)}) fresh ${((c.user + c.system) / ENTRIES).toFixed(1)} µs/entry main ${us(split.mainMs)} verify ${us(split.namedMs)} other ${us(split.busiestOtherMs + split.restMs)} holder ${us(hc)}`, [...byName].filter(([, v]) => v > 0).map(([k, v]) => k + '=' + us(v)).join(' '))
}
await holder.stop()
rmSync(dir, { recursive: true })
