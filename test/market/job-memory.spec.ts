/**
 * The provider's job memory under a flood of throwaway keys (issue 36 item 3): a job with an
 * auction in progress is never forgotten for strangers' requests, and strangers evict strangers.
 */
import * as assert from 'node:assert/strict'
import { JOB_MEMORY_LIMITS, JobMemory } from '../../src/market/provider/job-memory.js'

/** Job requests live two minutes past a one-second window (job-spec.ts). */
const LIFETIME_MS = 121_000

describe('job memory (issue 36: flushed by throwaway keys)', () => {
  let clock: number
  const now = (): number => clock
  const live = (): { expiresAt: number } => ({ expiresAt: clock + LIFETIME_MS })

  beforeEach(() => { clock = 1_700_000_000_000 })

  /** `n` signers of one request each, as a flood of throwaway keys publishes them. */
  function flood (m: JobMemory<string>, n: number, tag = 'k'): void {
    for (let i = 0; i < n; i++) m.set(`${tag}${i}`, 'j', 'flood', live())
  }

  it(`${JOB_MEMORY_LIMITS.total} throwaway signers after a renter's job bid on leave the renter's in-progress job remembered`, () => {
    const m = new JobMemory<string>({ now })
    assert.equal(m.set('renter', 'job', 'honest', { ...live(), pin: true }), true)
    flood(m, JOB_MEMORY_LIMITS.total + 1)
    assert.equal(m.size, JOB_MEMORY_LIMITS.total)
    assert.equal(m.get('renter', 'job'), 'honest')
  })

  it('strangers evict strangers: an older job not bid on outlives a flood of single-request keys', () => {
    const m = new JobMemory<string>({ now })
    m.set('renter', 'job', 'honest', live())
    flood(m, 3 * JOB_MEMORY_LIMITS.total)
    assert.equal(m.size, JOB_MEMORY_LIMITS.total)
    assert.equal(m.get('renter', 'job'), 'honest')
    assert.equal(m.get('k0', 'j'), 'flood', 'the flood\'s first keys stay, its newest go')
    assert.equal(m.get(`k${3 * JOB_MEMORY_LIMITS.total - 1}`, 'j'), undefined)
  })

  it('a heavy signer still loses its oldest first, pinned jobs aside', () => {
    const m = new JobMemory<string>({ total: 6, perSigner: 4, now })
    m.set('renter', 'pinned', 'p', { ...live(), pin: true })
    for (let i = 0; i < 6; i++) m.set('renter', `r${i}`, 'r', live())
    assert.equal(m.get('renter', 'pinned'), 'p', 'over its own bound a signer forgets its oldest unpinned job')
    assert.equal(m.get('renter', 'r1'), undefined)
    assert.equal(m.get('renter', 'r5'), 'r')
    flood(m, 3)
    assert.equal(m.size, 6)
    assert.equal(m.get('renter', 'r3'), undefined, 'the signer holding the most unpinned jobs loses its oldest')
    assert.equal(m.get('renter', 'pinned'), 'p')
  })

  it('a pin ends when the request expires or is lifted, and the job can then be forgotten', () => {
    const m = new JobMemory<string>({ total: 4, now })
    m.set('a', 'expires', 'x', { expiresAt: clock + 1_000, pin: true })
    m.set('b', 'accepted', 'y', { ...live(), pin: true })
    assert.equal(m.pinned, 2)
    m.unpin('b', 'accepted')
    clock += 1_000
    assert.equal(m.pinned, 0)
    flood(m, 3)
    assert.equal(m.get('a', 'expires'), undefined, 'an expired request goes first')
    flood(m, 2, 'later')
    assert.equal(m.size, 4)
    assert.equal(m.get('b', 'accepted'), 'y', 'unpinned, it is one single among singles: the newest go')
    m.set('b', 'second', 'z', live())
    assert.equal(m.get('b', 'accepted'), undefined, 'b, now the heaviest, loses its oldest')
  })

  it('pins are capped: past the cap a job is remembered unpinned and the caller is told', () => {
    const m = new JobMemory<string>({ total: 10, pinned: 2, now })
    assert.equal(m.set('a', '1', 'a', { ...live(), pin: true }), true)
    assert.equal(m.set('b', '1', 'b', { ...live(), pin: true }), true)
    assert.equal(m.canPin(), false)
    assert.equal(m.set('c', '1', 'c', { ...live(), pin: true }), false)
    assert.equal(m.get('c', '1'), 'c')
    assert.equal(m.pinned, 2)
    // a renter's re-auction replaces its entry: the old pin goes with it
    assert.equal(m.set('a', '1', 'a2', { ...live(), pin: true }), true)
    assert.equal(m.pinned, 2)
    assert.equal(m.set('d', '1', 'd', { expiresAt: clock, pin: true }), false, 'an expired request is never pinned')
  })
})
