/**
 * The replication scope's rule (src/ledger/sync/scope.ts) on signed entries: hops from the roots
 * through the authors entries name, the horizon, a provider added as a root later, and `all`.
 */
import * as assert from 'node:assert/strict'
import { ReplicationScope } from '../../src/ledger/sync/scope.js'
import { jobEntries, newSigner, TestFeed } from './flood-fixtures.js'

describe('replication scope rule (issue 40.3)', () => {
  it('reaches counterparties hop by hop from the roots, up to the horizon, and re-reaches from a provider added later', async () => {
    const [me, p1, r1, p2, r2, p3] = await Promise.all(
      Array.from({ length: 6 }, async () => new TestFeed(await newSigner()))
    )
    const scope = new ReplicationScope({ selfId: me.id, mode: 'bounded', horizon: 2 })
    // a chain me – p1 – r1 – p2 – r2 – p3 of paired jobs
    const chain: Array<[TestFeed, TestFeed]> = [[p1, me], [p1, r1], [p2, r1], [p2, r2], [p3, r2]]
    for (const [p, r] of chain) {
      const j = jobEntries(p, r)
      scope.noteStored(j.attestation)
      scope.noteStored(j.receipt)
    }
    assert.equal(scope.hop(me.id), 0)
    assert.equal(scope.hop(p1.id), 1)
    assert.equal(scope.hop(r1.id), 2)
    assert.ok(!scope.includes(p2.id), 'three hops out')
    scope.mayAward(p2.id)
    assert.equal(scope.hop(p2.id), 0)
    assert.equal(scope.hop(r1.id), 1, 'nearer through the new root')
    assert.equal(scope.hop(r2.id), 1)
    assert.equal(scope.hop(p3.id), 2)
    scope.noteSkipped('x')
    scope.noteSkipped('x')
    assert.deepEqual(scope.stats(0), { mode: 'bounded', horizon: 2, inScope: 6, awardable: 1, skippedHeads: 2, skippedAuthors: 1 })
  })

  it('horizon 0 holds only the roots; all holds everything', async () => {
    const [me, p] = await Promise.all([newSigner(), newSigner()]).then(s => s.map(x => new TestFeed(x)))
    const narrow = new ReplicationScope({ selfId: me.id, mode: 'bounded', horizon: 0, seeds: ['seed'] })
    const j = jobEntries(p, me)
    narrow.noteStored(j.attestation)
    assert.ok(narrow.includes(me.id) && narrow.includes('seed'))
    assert.ok(!narrow.includes(p.id))
    const all = new ReplicationScope({ selfId: me.id, mode: 'all' })
    assert.ok(all.includes(p.id) && all.includes('anyone'))
  })
})
