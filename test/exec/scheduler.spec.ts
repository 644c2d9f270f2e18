import { strict as assert } from 'node:assert'
import { ConditionMonitor } from '../../src/exec/provider/conditions.js'
import { SlotScheduler, type Refusal } from '../../src/exec/provider/scheduler.js'
import type { Lease, PreemptNotice } from '../../src/exec/provider/slot-lease.js'

const gpus = (n: number): Array<{ index: number, uuid: string, simulated: boolean }> => Array.from({ length: n }, (_, i) => ({ index: i, uuid: `GPU-sim-${i}`, simulated: true }))

function lease (x: Lease | Refusal): Lease {
  if ('refused' in x) assert.fail(`refused: ${x.detail}`)
  return x
}

describe('exec: slot scheduler', () => {
  it('gives one slot per GPU and refuses when full', () => {
    const s = new SlotScheduler({ gpus: gpus(2) })
    const a = lease(s.reserve({ key: 'a', tier: 'silver' }))
    const b = lease(s.reserve({ key: 'b', tier: 'bronze' }))
    assert.notEqual(a.gpu.index, b.gpu.index)
    const c = s.reserve({ key: 'c', tier: 'bronze' })
    assert.ok('refused' in c && c.refused === 'no-capacity')
    assert.deepEqual(
      { ...s.capacity(), paused: [] },
      { total: 2, free: 0, busy: 2, preemptible: 1, paused: [], graceMs: 10_000 }
    )
    a.release()
    a.release()
    assert.equal(s.capacity().free, 1)
  })

  it('an accepted award holds a free slot from other renters until its Start; one per renter, never against its own next job; gone at its bound', () => {
    let now = 1_000
    const s = new SlotScheduler({ gpus: gpus(2), now: () => now })
    s.promise('award-a1', 'renter-a', now + 15_000)
    assert.equal(s.freeCount(), 1, 'one of two slots is held for the accepted award')
    assert.equal(s.freeCountFor('renter-b'), 1)
    assert.equal(s.freeCountFor('renter-a'), 2, 'its own accepted award does not hold a slot from its renter')
    s.promise('award-b1', 'renter-b', now + 15_000)
    assert.equal(s.freeCountFor('renter-c'), 0, 'a third renter hears no capacity: no second yes for one slot')
    s.promise('award-a2', 'renter-a', now + 15_000)
    assert.equal(s.freeCountFor('renter-c'), 0, 'a renter\'s next award replaces its earlier one: still one each')
    // the Starts still find their slots: a promise holds a count, not a GPU
    lease(s.reserve({ key: 'a', tier: 'silver' }))
    s.fulfil('award-a2')
    assert.equal(s.freeCountFor('renter-c'), 0)
    now += 15_000
    assert.equal(s.freeCountFor('renter-c'), 1, 'a promise whose Start never came lets go at its bound')
    s.fulfil('never-promised')
    assert.equal(s.capacity().free, 1)
  })

  it('gold preempts a running bronze job with the grace period and gets its slot when it stops', async () => {
    const s = new SlotScheduler({ gpus: gpus(1), graceMs: 2_000 })
    const bronze = lease(s.reserve({ key: 'bronze', tier: 'bronze' }))
    const notices: PreemptNotice[] = []
    bronze.onPreempt(n => notices.push(n))
    const gold = lease(s.reserve({ key: 'gold', tier: 'gold' }))
    assert.deepEqual(notices, [{ reason: 'tier', graceMs: 2_000, detail: 'preempted by a gold job' }])
    let granted = false
    void gold.ready.then(() => { granted = true })
    await Promise.resolve()
    assert.equal(granted, false, 'the slot is not free until the bronze job stops')
    // nothing else may claim the slot meanwhile
    assert.ok('refused' in s.reserve({ key: 'silver', tier: 'silver' }))
    bronze.release()
    await gold.ready
    assert.equal(gold.gpu.index, 0)
    assert.equal(s.slotsView()[0]?.job?.key, 'gold')
  })

  it('never preempts gold or silver', () => {
    const s = new SlotScheduler({ gpus: gpus(2) })
    const notices: string[] = []
    lease(s.reserve({ key: 'g', tier: 'gold' })).onPreempt(() => notices.push('g'))
    lease(s.reserve({ key: 's', tier: 'silver' })).onPreempt(() => notices.push('s'))
    const r = s.reserve({ key: 'g2', tier: 'gold' })
    assert.ok('refused' in r && r.refused === 'no-capacity')
    s.setPause('thermal', true, 'hot')
    assert.deepEqual(notices, [])
  })

  it('a notice that comes before the handler is delivered when it is registered', () => {
    const s = new SlotScheduler({ gpus: gpus(1) })
    const bronze = lease(s.reserve({ key: 'b', tier: 'bronze' }))
    lease(s.reserve({ key: 's', tier: 'silver' }))
    let got: PreemptNotice | undefined
    bronze.onPreempt(n => { got = n })
    assert.equal(got?.reason, 'tier')
  })

  it('a closing window or a thermal limit preempts bronze work and pauses until clear', () => {
    const s = new SlotScheduler({ gpus: gpus(2) })
    const reasons: string[] = []
    lease(s.reserve({ key: 'b', tier: 'bronze' })).onPreempt(n => reasons.push(n.reason))
    lease(s.reserve({ key: 's', tier: 'silver' })).onPreempt(n => reasons.push(`silver:${n.reason}`))
    let changes = 0
    s.events.addEventListener('change', () => { changes++ })
    s.setPause('window', true, 'outside the availability window')
    assert.deepEqual(reasons, ['window'])
    assert.deepEqual(s.capacity().paused, ['window'])
    const r = s.canAccept({ tier: 'gold' })
    assert.ok('refused' in r && r.refused === 'paused')
    s.setPause('thermal', true)
    assert.deepEqual(reasons, ['window'], 'one notice per job')
    s.setPause('window', false)
    s.setPause('thermal', false)
    assert.deepEqual(s.capacity().paused, [])
    assert.ok(changes >= 3)
  })

  it('a bronze job needing more notice than the provider gives is refused', () => {
    const s = new SlotScheduler({ gpus: gpus(1), graceMs: 5_000 })
    const r = s.canAccept({ tier: 'bronze', minNoticeMs: 30_000 })
    assert.ok('refused' in r && r.refused === 'notice')
    assert.deepEqual(s.canAccept({ tier: 'bronze', minNoticeMs: 5_000 }), { ok: true })
  })

  it('the condition monitor pauses on a hot GPU and clears with hysteresis', async () => {
    const s = new SlotScheduler({ gpus: gpus(1) })
    let temp = 90
    const m = new ConditionMonitor(s, {
      read: async () => [{ index: 0, temperatureC: temp, powerDrawW: 100 }],
      maxTemperatureC: 85,
      maxPowerWatts: 400,
      available: () => true
    })
    await m.check()
    assert.deepEqual(s.capacity().paused, ['thermal'])
    temp = 84
    await m.check()
    assert.deepEqual(s.capacity().paused, ['thermal'], 'not yet 3 °C below the limit')
    temp = 80
    await m.check()
    assert.deepEqual(s.capacity().paused, [])
  })
})
