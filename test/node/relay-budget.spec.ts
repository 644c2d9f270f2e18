/**
 * A relay's hourly bandwidth budget (src/node/connectivity/relay-budget.ts, issue 37 item 3): bytes are
 * counted across circuits until the hour's budget is passed, then refused until the hour turns.
 * Between real nodes: test/node/relay.spec.ts.
 */
import * as assert from 'node:assert/strict'
import { isCoded } from '../../src/common/index.js'
import { RelayBudget } from '../../src/node/connectivity/relay-budget.js'
import { NodeError } from '../../src/node/errors.js'

describe('node: a relay\'s hourly budget', () => {
  it('counts every circuit\'s bytes together, throws past the budget, and starts over an hour after the window began', () => {
    let now = 1_000_000
    const budget = new RelayBudget(3_000, () => now)
    budget.take(1_000)
    budget.take(2_000)
    assert.equal(budget.spent(), true)
    assert.throws(() => budget.take(1), (err: unknown) => isCoded(err, NodeError, 'ERR_RELAY_BUDGET') && /3000 bytes per hour is spent/.test(err.message))
    assert.deepEqual(budget.status(), { bytesPerHour: 3_000, usedBytes: 3_000, resetsInMs: 60 * 60_000 })
    now += 60 * 60_000 - 1
    assert.equal(budget.spent(), true, 'still the same hour')
    now += 1
    assert.equal(budget.spent(), false, 'a new hour')
    budget.take(2_999)
    assert.equal(budget.status().usedBytes, 2_999)
  })
})
