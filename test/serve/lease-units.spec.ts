/** Service files, the lease on the wire, and the bid rule that a lease must fit its whole minimum length (issue 17). */
import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile } from '../../src/capability/policy/profile.js'
import { leaseJobSpec, loadServiceFile, parseServiceSpec } from '../../src/serve/index.js'
import { noteDraining, ReplicaPool } from '../../src/serve/router.js'
import { toJobRequest } from '../../src/market/renter/job-spec.js'
import { matchJob } from '../../src/market/provider/bid-declines.js'
import { DeclineReason, readJobRequest } from '../../src/market/shared/messages.js'
import { JobRequest } from '../../protocols/market.js'
import { DOMAIN } from '../../protocols/ids.js'
import { openEnvelope, sealEnvelope } from '../../src/identity/index.js'
import { sentimentSpec, SERVICES_DIR } from './fixtures.js'

/**
 * A replica pool whose random picks alternate 0.1, 0.9 and whose clock the spec may move; `add`
 * puts in a ready replica.
 */
function replicaPool (maxInflight: number, now?: () => number): { pool: ReplicaPool, add: (id: string) => any } {
  let i = 0
  const pool = new ReplicaPool(maxInflight, () => [0.1, 0.9][i++ % 2] as number, now)
  return { pool, add: (id) => pool.add({ id, leaseId: new Uint8Array(16), provider: {} as any, region: '', state: 'ready' }) }
}

const FREE = { freeSlots: 1, preemptibleSlots: 0, totalSlots: 1, thermalOk: true, powerOk: true }

describe('serve: service files, leases on the wire, lease bids (issue 17)', () => {
  it('reads examples/services/sentiment.yaml: two regions, a lease until stopped, the files to ship', async () => {
    const spec = await loadServiceFile(`${SERVICES_DIR}/sentiment.yaml`)
    assert.equal(spec.name, 'sentiment')
    assert.deepEqual(spec.replicas.map(r => r.region), ['eu-west', 'us-east'])
    assert.equal(spec.leaseMs, 0)
    assert.equal(spec.minLeaseMs, 30 * 60_000)
    assert.equal(spec.healthPath, '/health')
    assert.ok(spec.files['node_modules/wink-nlp']?.endsWith('node_modules/wink-nlp'))
  })

  it('names the bad field', () => {
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: 'Bad Name' }, /"name"/],
      [{ replicas: 0 }, /"replicas"/],
      [{ replicas: { 'eu west': 1 } }, /replicas\.eu west/],
      [{ gateway: { bind: '0.0.0.0' } }, /gateway\.token/],
      [{ lease: { minutes: 10, untilStopped: true } }, /"lease"/],
      [{ files: { '../escape': 'x' } }, /files\.\.\.\/escape/],
      [{ runtime: { command: ['x'], env: { PORT: '1' } } }, /runtime\.env\.PORT/],
      [{ runtime: {} }, /"runtime"/],
      [{ health: 'health' }, /"health"/],
      [{ surprise: 1 }, /surprise/]
    ]
    for (const [over, message] of bad) {
      assert.throws(() => parseServiceSpec(sentimentSpec(over), SERVICES_DIR), message, JSON.stringify(over))
    }
  })

  it('replicas per residency zone: the replica\'s auction asks for the zone, not a region; a zone outside the residency is refused', () => {
    const spec = parseServiceSpec(sentimentSpec({ replicas: { eu: 1, 'us-east': 1 } }), SERVICES_DIR)
    assert.deepEqual(spec.replicas.map(r => r.region), ['eu', 'us-east'])
    const eu = leaseJobSpec(spec, 'eu')
    assert.equal(eu.constraints.residency, 'eu')
    assert.deepEqual(eu.constraints.regions, [])
    assert.deepEqual(leaseJobSpec(spec, 'us-east').constraints.regions, ['us-east'])
    assert.throws(() => parseServiceSpec(sentimentSpec({ replicas: { us: 1 }, residency: 'eu' }), SERVICES_DIR), /replicas\.us/)
  })

  it('a replica\'s job request carries the lease; a lease that is not inference or has a bad health path does not verify', async () => {
    const key = await generateKeyPair('Ed25519')
    const peerId = peerIdFromPrivateKey(key)
    const spec = parseServiceSpec(sentimentSpec(), SERVICES_DIR)
    const request = toJobRequest(leaseJobSpec(spec, 'eu-west'), { renter: peerId.toMultihash().bytes })
    assert.equal(request.workload, 'inference')
    assert.deepEqual(request.lease, { minDurationMs: 60_000n, healthPath: '/health' })
    const read = (r: JobRequest): unknown =>
      readJobRequest(
        openEnvelope(sealEnvelope(key as any, peerId, DOMAIN.jobRequest, JobRequest.encode(r)), {
          domain: DOMAIN.jobRequest
        })
      )
    assert.equal((read(request) as any).message.lease.healthPath, '/health')
    assert.throws(() => read({ ...request, workload: 'training' }), /a lease must have workload "inference"/)
    assert.throws(() => read({ ...request, lease: { minDurationMs: 1n, healthPath: 'no-slash' } }), /lease\.health_path/)
    assert.throws(() => read({ ...request, lease: { minDurationMs: 1n, healthPath: `/${'a'.repeat(300)}` } }), /lease\.health_path/)
  })

  it('a provider never bids a lease into a window that closes before its minimum length (the estimate alone would fit)', async () => {
    const key = await generateKeyPair('Ed25519')
    const renter = peerIdFromPrivateKey(key).toMultihash().bytes
    const now = Date.now()
    const hour = new Date(now).getUTCHours()
    const hh = (h: number): string => `${String(h).padStart(2, '0')}:00`
    // open now, closing at the next hour but one (at most 2 h from now)
    const window = `daily ${hh(hour)}-${hour >= 22 ? '24:00' : hh(hour + 2)}`
    const profile = providerProfile(parsePolicy({ region: 'eu-west', priceFloor: 1, availability: { windows: [window], timeZone: 'UTC' } }), parseSimulatedGpus(['H100:80']))
    const short = parseServiceSpec(sentimentSpec({ lease: { minutes: 180, minMinutes: 150 } }), SERVICES_DIR)
    const lease = toJobRequest(leaseJobSpec(short, ''), { renter, now })
    lease.estDurationMs = 60_000n
    const r = matchJob(profile, lease, FREE, now)
    assert.equal(r.ok ? 'ok' : r.reason, DeclineReason.AVAILABILITY_WINDOW)
    const batch = { ...lease, lease: undefined }
    assert.equal(matchJob(profile, batch, FREE, now).ok, true, 'the same job without the lease fits the window')
  })

  it('power of two choices: an unmeasured replica gets one request at a time; a measured slow one loses to a fast one', () => {
    const { pool, add: mk } = replicaPool(4)
    const a = mk('a')
    const b = mk('b')
    // the first two answers carry the dial and the warm-up: a is measured at its third
    pool.observe(a, 900)
    pool.observe(a, 900)
    assert.equal(a.ewmaMs, undefined)
    pool.observe(a, 2)
    assert.equal(a.ewmaMs, 2)
    b.inflight = 1
    assert.equal(pool.pick()?.id, 'a', 'unmeasured b with one in flight waits for its first answer')
    for (let k = 0; k < 3; k++) pool.observe(b, 50)
    b.inflight = 0
    a.inflight = 3
    assert.equal(pool.pick()?.id, 'a', '2 ms with 3 in flight beats 50 ms idle')
    a.inflight = 4
    assert.equal(pool.pick()?.id, 'b', 'a at its in-flight bound is skipped')
    b.state = 'draining'
    assert.equal(pool.pick(), undefined, 'no ready replica below its bound')
  })

  it('a replica measured slow once is measured again when its measure is stale, and the new answer replaces the old', () => {
    let clock = 1_000_000
    const { pool, add: mk } = replicaPool(8, () => clock)
    const fast = mk('fast')
    const slow = mk('slow')
    for (let k = 0; k < 3; k++) { pool.observe(fast, 5); pool.observe(slow, 500) }
    clock += 300
    pool.observe(fast, 5)
    assert.equal(pool.pick()?.id, 'fast', 'a fresh slow measure loses')
    clock += 300
    pool.observe(fast, 5)
    assert.equal(pool.pick()?.id, 'slow', 'stale after half a second without an answer: it gets the next request')
    slow.inflight = 1
    assert.equal(pool.pick()?.id, 'fast', 'one probe at a time: with it in flight, its old measure counts')
    pool.observe(slow, 4)
    slow.inflight = 0
    assert.equal(slow.ewmaMs, 4, 'the new answer restarts the stale EWMA (not 0.8 × 500 + 0.2 × 4)')
    fast.inflight = 1
    assert.equal(pool.pick()?.id, 'slow', 'measured fast now, it takes its share')
  })

  it('under steady load a replica measured slow still gets one pick in 32, and takes its share once its answers are fast', () => {
    let clock = 1_000_000
    const { pool, add: mk } = replicaPool(8, () => clock)
    const warm = mk('warm')
    const cold = mk('cold')
    for (let k = 0; k < 3; k++) { pool.observe(warm, 5); pool.observe(cold, 60) }
    // 200 requests inside the stale window, the warm replica answering each
    const served = { warm: 0, cold: 0 }
    for (let k = 0; k < 200; k++) {
      const r = pool.pick() as any
      served[r.id as 'warm' | 'cold']++
      clock += 1
      pool.observe(r, r.id === 'cold' ? 4 : 5)
    }
    assert.ok(served.cold >= Math.floor(200 / 32), `the cold replica was picked ${served.cold} times`)
    assert.ok(cold.ewmaMs < 60, 'its fresh answers moved its measure')
    // once measured faster than the warm one, it wins the scores
    while ((cold.ewmaMs as number) >= (warm.ewmaMs as number)) pool.observe(cold, 4)
    assert.equal(pool.pick()?.id, 'cold')
  })

  it('a replica said to be stopping (an answer\'s draining flag, or a DRAINING or NO_LEASE refusal) leaves rotation; anything else leaves it as it is', () => {
    const { pool, add: mk } = replicaPool(8)
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(mk)
    noteDraining(a, { draining: true })
    noteDraining(b, { wireCode: 'DRAINING' })
    noteDraining(c, { wireCode: 'NO_LEASE' })
    noteDraining(d, { draining: false, wireCode: 'TIMEOUT' })
    assert.deepEqual([a, b, c, d].map(r => r.state), ['draining', 'draining', 'draining', 'ready'])
    assert.deepEqual(pool.candidates().map(r => r.id), ['d'])
  })
})
