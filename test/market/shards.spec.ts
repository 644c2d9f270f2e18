import * as assert from 'node:assert/strict'
import fc from 'fast-check'
import { parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile } from '../../src/capability/policy/profile.js'
import { parseJobSpec, toJobRequest } from '../../src/market/renter/job-spec.js'
import { matchJob } from '../../src/market/provider/bid-declines.js'
import { JOB_SHARD_TOPICS, MAX_PROVIDER_SHARDS, jobShardOf, providerShards, shardZoneOf, vramClassOf } from '../../protocols/ids.js'

const FREE = { freeSlots: 1, preemptibleSlots: 0, totalSlots: 1, thermalOk: true, powerOk: true }
const RENTER = new Uint8Array(34)

describe('market: job shards (issue 15)', () => {
  it('names a bounded set of topics, and each job exactly one of them', () => {
    assert.equal(JOB_SHARD_TOPICS.length, 30)
    assert.equal(new Set(JOB_SHARD_TOPICS).size, 30)
    assert.equal(jobShardOf(undefined), '/idlegrid/3/jobs/any/vram-0')
    assert.equal(jobShardOf({ residency: 'eu', minVramMib: Math.floor(40 * 1024 * 0.93) }), '/idlegrid/3/jobs/eu/vram-40')
    assert.equal(jobShardOf({ residency: 'eu', minVramMib: Math.floor(40 * 1024 * 0.93) - 1 }), '/idlegrid/3/jobs/eu/vram-24')
    assert.equal(jobShardOf({ residency: 'mars', minVramMib: 10 ** 9 }), '/idlegrid/3/jobs/other/vram-80')
    assert.equal(shardZoneOf('any'), 'other', 'a residency literally named "any" is not the no-residency zone')
    assert.equal(vramClassOf(0), 0)
  })

  it('a provider joins at most MAX_PROVIDER_SHARDS shards, all real topics', () => {
    const shards = providerShards('eu', 81_559)
    assert.equal(shards.length, MAX_PROVIDER_SHARDS)
    for (const t of shards) assert.ok(JOB_SHARD_TOPICS.includes(t), t)
    assert.deepEqual(providerShards('us', 8_000), ['/idlegrid/3/jobs/any/vram-0', '/idlegrid/3/jobs/us/vram-0'])
  })

  it('every job a provider can serve (bid-declines.ts) is on a shard the provider joined', () => {
    const regions = ['eu-west', 'us-east', 'ap-south', 'sa-east', 'xx-north']
    const gpus = ['RTX 4090:24', 'A100:40', 'H100:80', 'L40S:48', 'T4:16', 'RTX 3060:12', 'H200:141']
    fc.assert(fc.property(
      fc.constantFrom(...regions), fc.constantFrom(...gpus),
      fc.option(fc.constantFrom('eu', 'us', 'ap', 'sa', 'xx', 'zz'), { nil: undefined }), fc.integer({ min: 0, max: 160 }),
      (region, gpu, residency, minVramGb) => {
        const profile = providerProfile(parsePolicy({ region, priceFloor: 1, images: ['*'] }), parseSimulatedGpus([gpu]))
        const job = toJobRequest(parseJobSpec({ runtime: { command: ['x'] }, constraints: { minVramGb, ...(residency != null ? { residency } : {}) } }), { renter: RENTER })
        const joined = providerShards(profile.policy.residency, Math.max(...profile.groups.map(g => g.vramMib)))
        if (matchJob(profile, job, FREE, Date.now()).ok) assert.ok(joined.includes(jobShardOf(job.constraints)), `${region} ${gpu} misses ${jobShardOf(job.constraints)}`)
      }
    ), { numRuns: 300 })
  })
})
