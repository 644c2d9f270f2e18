/**
 * A fresh node's synced ranges are verified in turns (src/ledger/ingest/range-turns.ts): each
 * once the range before it is being placed, so a sync of many feeds at once holds two ranges
 * decoded, not every range that arrived; and the ingest queue keeps no outcome after it is read.
 */
import * as assert from 'node:assert/strict'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { LedgerEntry } from '../../protocols/ledger.js'
import { signTestJob, type Signer } from '../../src/ledger/dev.js'
import { sealEntry, type LedgerRecord } from '../../src/ledger/entries/entry.js'
import { LedgerIngest } from '../../src/ledger/ingest/ingest.js'
import { RangeTurns } from '../../src/ledger/ingest/range-turns.js'
import { tempDir } from '../utils/index.js'

async function newSigner (): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

/** `n` attestation entries of `provider`'s feed from seq 1. */
function attestations (provider: Signer, renter: Signer, n: number): LedgerRecord[] {
  const out: LedgerRecord[] = []
  const at = Date.now() - 10_000
  for (let seq = 1; seq <= n; seq++) {
    const job = signTestJob({ provider, renter, at })
    out.push(sealEntry(provider.key, provider.peerId, {
      seq,
      prevHash: out.at(-1)?.hash ?? new Uint8Array(0),
      time: at + seq,
      kind: LedgerEntry.BodyKind.ATTESTATION,
      body: job.attestation
    }))
  }
  return out
}

async function settled (p: Promise<unknown>): Promise<boolean> {
  let done = false
  void p.then(() => { done = true })
  await new Promise(resolve => setImmediate(resolve))
  return done
}

describe('ledger: synced ranges verified in turns', function () {
  this.timeout(30_000)

  it('a turn is ready once the one taken before it is placing, in the order taken', async () => {
    const turns = new RangeTurns()
    const first = turns.take()
    const second = turns.take()
    const third = turns.take()
    assert.equal(await settled(first.ready), true)
    assert.equal(await settled(second.ready), false)
    assert.equal(await settled(third.ready), false)
    first.placing()
    assert.equal(await settled(second.ready), true)
    assert.equal(await settled(third.ready), false)
    second.placing()
    second.placing() // twice is once
    assert.equal(await settled(third.ready), true)
  })

  it('ranges of several feeds handed in at once are all verified and stored, in the order handed in', async () => {
    const dir = await tempDir('range-turns-')
    const key = await generateKeyPair('Ed25519')
    const store = await LedgerIngest.open(dir.path + '/ledger', { privateKey: key, peerId: peerIdFromPrivateKey(key) })
    try {
      const renter = await newSigner()
      const feeds = await Promise.all([0, 1, 2, 3].map(async () => {
        const provider = await newSigner()
        return attestations(provider, renter, 40)
      }))
      const placed: string[] = []
      const results = await Promise.all(feeds.map(async (records, i) => {
        const outcomes = await store.ingest(
          records.map(r => r.envelope),
          { range: { author: records[0].author, fromSeq: 1 } }
        )
        placed.push(String(i))
        return outcomes
      }))
      assert.deepEqual(placed, ['0', '1', '2', '3'])
      for (const outcomes of results) assert.deepEqual(outcomes.map(o => o.status), Array(40).fill('added'))
      for (const records of feeds) assert.equal(store.store.head(records[0].authorId)?.seq, 40)
    } finally {
      await store.close()
      await dir.cleanup()
    }
  })

  it('the ingest queue keeps no outcome once it is read: a range\'s records can be collected', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const dir = await tempDir('range-turns-gc-')
    const key = await generateKeyPair('Ed25519')
    const store = await LedgerIngest.open(dir.path + '/ledger', { privateKey: key, peerId: peerIdFromPrivateKey(key) })
    try {
      const records = attestations(await newSigner(), await newSigner(), 3)
      let outcomes: unknown[] | undefined = await store.ingest(
        records.map(r => r.envelope),
        { range: { author: records[0].author, fromSeq: 1 } }
      )
      // the first entry's record: the store keeps its feed's head (the last), not the others
      const first = new WeakRef((outcomes[0] as { record: object }).record)
      outcomes = undefined
      for (let i = 0; i < 5 && first.deref() != null; i++) {
        await new Promise(resolve => setImmediate(resolve))
        gc()
      }
      assert.ok(first.deref() === undefined, 'the first entry\'s record is still held after its outcomes were dropped')
    } finally {
      await store.close()
      await dir.cleanup()
    }
  })
})
