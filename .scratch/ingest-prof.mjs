// ingest phase of the ledger bench alone: ROUNDS alternations, PROF=1 writes a cpuprofile of the ingest
import { Session } from 'node:inspector/promises'
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { LedgerEntry } from '../dist/protocols/ledger.js'
import { signTestJob } from '../dist/src/ledger/dev.js'
import { sealEntry } from '../dist/src/ledger/entries/entry.js'
import { LedgerIngest } from '../dist/src/ledger/ingest/ingest.js'
import { threadCpuMs, threadNames, threadSplit } from '../dist/test/bench/process-usage.js'
import { VERIFIER_THREAD_NAME } from '../dist/src/identity/verify-batch.js'
import { verifyManyInPool } from '../dist/src/identity/signature.js'

const ENTRIES = Number(process.env.N ?? 20000)
const PAIRS = 20
const BATCH = 256
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
const all = [...feeds.values()].map(f => f.entries)
const session = new Session(); session.connect()
const { SignedEnvelope } = await import('../dist/protocols/envelope.js')
const { signingInput } = await import('../dist/src/identity/envelope.js')
const { peerIdFromMultihash } = await import('@libp2p/peer-id')
const Digest = await import('multiformats/hashes/digest')
const sigs = all.flat().map(bytes => { const env = SignedEnvelope.decode(bytes); return { publicKey: peerIdFromMultihash(Digest.decode(env.signer)).publicKey.raw, message: signingInput(env.domain, env.payload), signature: env.signature } })
const raw = async () => { const t = performance.now(); const c = process.cpuUsage(); await verifyManyInPool(sigs, 1024); const ms = performance.now() - t; const u = process.cpuUsage(c); return { rate: sigs.length / ms * 1000, cpu: (u.user + u.system) / sigs.length } }
const dir = mkdtempSync(join(tmpdir(), 'ingest-prof-'))
for (let round = 0; round < Number(process.env.ROUNDS ?? 3); round++) {
  const r = await raw(); console.log(`raw ${Math.round(r.rate)}/s ${r.cpu.toFixed(1)} µs/sig`)
  const key = await generateKeyPair('Ed25519')
  const store = await LedgerIngest.open(join(dir, 'r' + round), { privateKey: key, peerId: peerIdFromPrivateKey(key) })
  if (process.env.PROF && round === 1) { await session.post('Profiler.enable'); await session.post('Profiler.setSamplingInterval', { interval: 100 }); await session.post('Profiler.start') }
  const t0 = performance.now(); const cpu = process.cpuUsage(); const threads = threadCpuMs()
  let previous
  for (const feed of all) for (let i = 0; i < feed.length; i += BATCH) {
    const current = store.ingest(feed.slice(i, i + BATCH)).then(o => { if (o.some(x => x.status !== 'added')) throw new Error(o.find(x => x.status !== 'added').status) })
    current.catch(() => {})
    if (previous) await previous
    previous = current
  }
  await previous
  const ms = performance.now() - t0; const c = process.cpuUsage(cpu)
  const split = threadSplit(threads, threadCpuMs(), process.pid, { name: VERIFIER_THREAD_NAME, names: threadNames() })
  if (process.env.PROF && round === 1) { const { profile } = await session.post('Profiler.stop'); writeFileSync('/tmp/ingest.cpuprofile', JSON.stringify(profile)) }
  await store.close()
  const us = x => (x * 1000 / ENTRIES).toFixed(1)
  console.log(`round ${round}: ${Math.round(ENTRIES / ms * 1000)}/s cpu ${((c.user + c.system) / ENTRIES).toFixed(1)} µs/entry main ${us(split.mainMs)} verify ${us(split.namedMs)} other ${us(split.busiestOtherMs + split.restMs)}`)
}
rmSync(dir, { recursive: true })
