/**
 * The announcer's retry (src/ledger/sync/announce.ts): a seed whose announcement fails (a connection
 * that stalled through a partition) is announced to again, a bounded number of times. The sync
 * client here is a stand-in that fails as a stalled stream does: the real path is the partition
 * chaos spec (test/chaos/partition.spec.ts), which checks ledgers equal within 10 s of a heal.
 */
import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { logger } from '@libp2p/logger'
import { ANNOUNCE_RETRIES, FeedAnnouncer } from '../../src/ledger/sync/announce.js'
import { waitFor } from '../utils/index.js'
import type { LedgerRecord } from '../../src/ledger/entries/entry.js'
import type { SyncClient } from '../../src/ledger/sync/client.js'

describe('ledger announcements', function () {
  this.timeout(30_000)

  async function announcerFailing (
    failures: number
  ): Promise<{ announcer: FeedAnnouncer, calls: () => number, aborter: AbortController }> {
    const seed = peerIdFromPrivateKey(await generateKeyPair('Ed25519'))
    let calls = 0
    const client = {
      connectedPeers: () => [seed],
      heads: async () => {
        calls++
        if (calls <= failures) throw new Error('stream stalled')
        return { heads: [], more: false }
      }
    } as unknown as SyncClient
    const aborter = new AbortController()
    const announcer = new FeedAnnouncer({ client, seeds: [seed.toString()], signal: aborter.signal, log: logger('test:announce'), retryBaseMs: 20 })
    return { announcer, calls: () => calls, aborter }
  }

  it('a failed announcement is sent again until the seed answers', async () => {
    const { announcer, calls, aborter } = await announcerFailing(2)
    announcer.noteOwn({} as LedgerRecord)
    await waitFor(() => calls() >= 3, { timeoutMs: 10_000, what: 'the third announcement (two failed)' })
    announcer.stop()
    aborter.abort()
    assert.equal(calls(), 3)
  })

  it('a seed that never answers is retried a bounded number of times', async () => {
    const { announcer, calls, aborter } = await announcerFailing(Infinity)
    announcer.noteOwn({} as LedgerRecord)
    await waitFor(() => calls() >= 1 + ANNOUNCE_RETRIES, { timeoutMs: 10_000, what: 'every retry' })
    // twice the next backoff would be: nothing more comes
    await new Promise(resolve => setTimeout(resolve, 2 * 20 * 2 ** ANNOUNCE_RETRIES))
    announcer.stop()
    aborter.abort()
    assert.equal(calls(), 1 + ANNOUNCE_RETRIES)
  })
})
