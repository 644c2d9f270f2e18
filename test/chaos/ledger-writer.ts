/**
 * Child process of the ledger kill spec: opens the ledger store at argv[2] with the Ed25519
 * key whose raw bytes are argv[3] (hex) and appends heartbeat summaries in a loop, printing
 * each entry's seq once append() resolved (acknowledged). The parent SIGKILLs it at random.
 */
import { privateKeyFromRaw } from '@libp2p/crypto/keys'
import type { Ed25519PrivateKey } from '@libp2p/interface'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { HeartbeatSummary, LedgerEntry } from '../../protocols/ledger.js'
import { LedgerIngest } from '../../src/ledger/ingest/ingest.js'

const [path, seedHex] = process.argv.slice(2)
const key = privateKeyFromRaw(Buffer.from(seedHex, 'hex')) as Ed25519PrivateKey
const store = await LedgerIngest.open(path, { privateKey: key, peerId: peerIdFromPrivateKey(key) })
process.stdout.write('open\n')
for (let i = 0; i < 1_000_000; i++) {
  const now = Date.now()
  const body = HeartbeatSummary.encode({
    periodStart: BigInt(now - 1000),
    periodEnd: BigInt(now),
    heartbeatsSent: 1,
    intervalMs: 1000,
    availableMs: 1000n,
    upMs: 1000n,
    slotsTotal: 1,
    busyPpm: 0
  })
  const record = await store.append(LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, body)
  process.stdout.write(`${record.seq}\n`)
}
