import * as assert from 'node:assert/strict'
import { LookupBackoff } from '../../src/node/connectivity/lookup-backoff.js'

// The peer connector's DHT lookups for more peers (src/node/connectivity/connector.ts): in a network
// smaller than the connection target the node never reaches it, and a walk every 10 s for ever
// was most of an idle provider's CPU (test/bench/idle.bench.ts). Clock injected: no waiting.

describe('connector lookup backoff', () => {
  it('is due after the base interval, not before', () => {
    const b = new LookupBackoff(10_000, 300_000, 0)
    assert.equal(b.due(9_999), false)
    assert.equal(b.due(10_000), true)
  })

  it('doubles the wait after each lookup that found nobody new, up to the cap', () => {
    const b = new LookupBackoff(10_000, 300_000, 0)
    let now = 10_000
    const waits: number[] = []
    for (let i = 0; i < 8; i++) {
      b.done(false, now)
      waits.push(b.currentWaitMs)
      assert.equal(b.due(now + b.currentWaitMs - 1), false)
      now += b.currentWaitMs
      assert.equal(b.due(now), true)
    }
    assert.deepEqual(waits, [20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000, 300_000])
  })

  it('goes back to the base interval when a lookup finds a peer', () => {
    const b = new LookupBackoff(10_000, 300_000, 0)
    for (let i = 0; i < 5; i++) b.done(false, 0)
    assert.equal(b.currentWaitMs, 300_000)
    b.done(true, 1_000)
    assert.equal(b.currentWaitMs, 10_000)
    assert.equal(b.due(11_000), true)
  })

  it('looks again within the base interval when a connection is lost, never later than already planned', () => {
    const b = new LookupBackoff(10_000, 300_000, 0)
    for (let i = 0; i < 5; i++) b.done(false, 0)
    assert.equal(b.due(200_000), false)
    b.reset(200_000)
    assert.equal(b.due(210_000), true)
    assert.equal(b.currentWaitMs, 10_000)
    // a lookup already due sooner stays due
    const c = new LookupBackoff(10_000, 300_000, 0)
    c.reset(5_000)
    assert.equal(c.due(10_000), true)
  })
})
