import * as assert from 'node:assert/strict'
import { auctionEventLine } from '../../src/cli/commands/auction-events.js'

describe('cli: auction progress lines', () => {
  it('escapes a provider\'s decline reason before printing it', () => {
    const line = auctionEventLine({ type: 'accept', winner: '12D3KooWabcdefghijkl', outcome: 'declined', reason: 'busy\u001b[2J\u0007' }, { bids: true })
    assert.ok(line != null)
    assert.ok(![...line].some(c => c.charCodeAt(0) < 0x20), `control characters reached the line: ${JSON.stringify(line)}`)
    assert.match(line, /declined: busy\\x1b\[2J\\x07; failing over$/)
  })

  it('prints bids only in the auction-only view, and nothing for an accepted offer', () => {
    const bid = { type: 'bid', price: 1.5, provider: '12D3KooWabcdefghijkl' }
    assert.match(auctionEventLine(bid, { bids: true }) ?? '', /^bid 1\.50 USD\/GPU-h from /)
    assert.equal(auctionEventLine(bid, { bids: false }), undefined)
    assert.equal(auctionEventLine({ type: 'accept', winner: 'x', outcome: 'accepted' }, { bids: true }), undefined)
  })
})
