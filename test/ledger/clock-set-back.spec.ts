/**
 * A node whose clock ran fast and was set right (issue 19 item 4): its feed's head is dated
 * ahead of its clock. Feed times never go back, so its next entries carry the head's time;
 * it must still write them (a receipt or summary is not lost), and peers take them once due.
 */
import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { HeartbeatSummary, LedgerEntry } from '../../protocols/ledger.js'
import { MAX_CLOCK_SKEW_MS } from '../../protocols/codec.js'
import { LedgerError } from '../../src/ledger/errors.js'
import { LedgerIngest } from '../../src/ledger/ingest/ingest.js'
import { tempDir } from '../utils/index.js'
import { isCoded } from '../../src/common/index.js'

const FAST_MS = 5 * 60_000

function summaryBody (end: number): Uint8Array {
  return HeartbeatSummary.encode({
    periodStart: BigInt(end - 60_000),
    periodEnd: BigInt(end),
    heartbeatsSent: 6,
    intervalMs: 10_000,
    availableMs: 60_000n,
    upMs: 60_000n,
    slotsTotal: 1,
    busyPpm: 0
  })
}

describe('ledger: own feed after the clock was set back', () => {
  it('appends at the head\'s time when the clock is behind it, and a peer takes the entry once it is due', async () => {
    const dir = await tempDir('idlegrid-clock-back-')
    const key = await generateKeyPair('Ed25519')
    const peerId = peerIdFromPrivateKey(key)
    const otherKey = await generateKeyPair('Ed25519')
    const real = Date.now()
    let mine = real + FAST_MS
    let theirs = real
    const store = await LedgerIngest.open(join(dir.path, 'mine'), { privateKey: key, peerId, now: () => mine })
    const peer = await LedgerIngest.open(join(dir.path, 'theirs'), { privateKey: otherKey, peerId: peerIdFromPrivateKey(otherKey), now: () => theirs })
    try {
      const fast = await store.append(LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, summaryBody(mine))
      mine = real // the clock is set right
      const next = await store.append(LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, summaryBody(mine))
      assert.equal(next.seq, 2)
      assert.equal(next.time, fast.time, 'the feed time went back')

      const [first] = await peer.ingest([fast.envelope])
      assert.equal(first?.status, 'rejected')
      assert.ok(first?.status === 'rejected' && isCoded(first.error, LedgerError, 'ERR_LEDGER_FUTURE'), JSON.stringify(first))
      theirs = fast.time - MAX_CLOCK_SKEW_MS // due: within the bound of the peer's clock
      const outcomes = await peer.ingest([fast.envelope, next.envelope])
      assert.deepEqual(outcomes.map(o => o.status), ['added', 'added'])
    } finally {
      await store.close()
      await peer.close()
      await dir.cleanup()
    }
  })
})
