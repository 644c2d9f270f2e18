import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { resolveConfig } from '../../src/config/config.js'
import type { AuctionOptions } from '../../src/market/renter/auction-report.js'
import { parseJobSpec, type AuctionReport, type JobSpec } from '../../src/market/index.js'
import { applyJobFlags } from '../../src/market/renter/job-spec.js'
import { createNode } from '../../src/node/create-node.js'
import { roleExtensions } from '../../src/compose/index.js'
import { isCoded } from '../../src/common/index.js'
import { SubmitError } from '../../src/submit/errors.js'
import { checkSubmission, payloadFromSpec, SUBMIT_DEFAULTS } from '../../src/submit/payload.js'
import { auctionRounds, ROUNDS_PER_ATTEMPT } from '../../src/submit/rounds.js'
import { SUBMIT_SERVICE, type SubmitService } from '../../src/submit/service.js'
import { submitServices } from '../../src/submit/role-services.js'
import { tempDir } from '../utils/index.js'
import type { Role } from '../../src/config/index.js'
import { CONTROL_HANDLERS } from '../../src/control/index.js'

const spec = (fields: Record<string, unknown> = {}): JobSpec => parseJobSpec({ name: 'unit', runtime: { command: ['true'] }, ...fields })

describe('submit: checking a job before any auction', () => {
  it('defaults to 3 attempts and bounds them to whole numbers from 1 to 10', () => {
    assert.equal(checkSubmission(spec()).maxAttempts, SUBMIT_DEFAULTS.maxAttempts)
    assert.equal(checkSubmission(spec(), '10').maxAttempts, 10)
    for (const bad of [0, 11, 2.5, 'x', -1]) assert.throws(() => checkSubmission(spec(), bad), (err: unknown) => isCoded(err, SubmitError, 'ERR_SUBMIT'), String(bad))
  })

  it('allows each attempt its time limit plus the auction and transfers', () => {
    const checked = checkSubmission(spec({ estimatedMinutes: 10 }), 2)
    assert.equal(checked.payload.runtime.timeoutMs, 15 * 60_000, 'the estimate plus half again')
    assert.equal(checked.timeoutMs, 2 * (15 * 60_000 + SUBMIT_DEFAULTS.attemptOverheadMs))
    assert.equal(payloadFromSpec(spec({ estimatedMinutes: 0.1 })).runtime.timeoutMs, 60_000, 'at least a minute')
  })

  it('refuses a job without image or command, and two inputs with one file name', () => {
    assert.throws(() => checkSubmission({ runtime: { command: [] }, inputs: [], estimatedMinutes: 1 }), /neither an image nor a command/)
    assert.throws(() => payloadFromSpec(spec({ inputs: ['a/data.csv', 'b/data.csv'] })), (err: Error) => isCoded(err, SubmitError, 'ERR_SUBMIT') && /two inputs are named data\.csv/.test(err.message))
    assert.deepEqual(payloadFromSpec(spec({ inputs: ['a/x.csv'] })).inputs.map(i => i.path), ['x.csv'])
  })

  it('runtime.shmSizeMiB (--shm-size) goes into the job\'s runtime as whole MiB; nonsense is refused naming the field', () => {
    assert.equal(payloadFromSpec(spec({ runtime: { image: 'a/b:1', shmSizeMiB: 2048 } })).runtime.shmSizeMiB, 2048)
    assert.equal(payloadFromSpec(spec()).runtime.shmSizeMiB, undefined, 'the engine\'s default when not asked')
    assert.equal(parseJobSpec(applyJobFlags({ name: 'unit', runtime: { command: ['true'] } }, { 'shm-size': '512' })).runtime.shmSizeMiB, 512)
    for (const bad of [0, 1.5, -1, 'lots']) assert.throws(() => spec({ runtime: { command: ['true'], shmSizeMiB: bad } }), /runtime\.shmSizeMiB/, String(bad))
  })
})

describe('submit: auction rounds for one attempt', function () {
  this.timeout(20_000)
  const award = { award: new Uint8Array([1]), jobRequest: new Uint8Array([2]) }
  const awarded = {
    signed: { job: { envelope: award.jobRequest }, award: { envelope: award.award }, bids: [] }
  } as unknown as AuctionReport
  const noBids = { noBids: { reason: 'no valid bids', declines: { 'no matching GPU': 2 } } } as unknown as AuctionReport

  it('returns the first round\'s award, auctioning the one job id and excluding failed providers', async () => {
    const seen: AuctionOptions[] = []
    const jobId = new Uint8Array(16).fill(7)
    const rounds = auctionRounds(
      {
        auction: async (_, opts = {}) => {
          seen.push(opts)
          return awarded
        }
      },
      spec(),
      { jobId, explain: true }
    )
    assert.deepEqual(await rounds.next({ exclude: ['p1'], attempt: 2 }), award)
    assert.equal(seen.length, 1)
    assert.deepEqual(seen[0].exclude, ['p1'])
    assert.equal(seen[0].jobId, jobId)
    assert.equal(seen[0].explainBelow, 3)
  })

  it(`tries up to ${ROUNDS_PER_ATTEMPT} rounds, then says why none gave an award`, async () => {
    let calls = 0
    const events: unknown[] = []
    const rounds = auctionRounds({
      auction: async (_, opts = {}) => { calls++; opts.onEvent?.({ type: 'closed', bids: 0, valid: 0 }); return noBids }
    }, spec(), { jobId: new Uint8Array(16), onEvent: (e) => events.push(e) })
    await assert.rejects(rounds.next({ exclude: [], attempt: 1 }), (err: Error) => isCoded(err, SubmitError, 'ERR_SUBMIT') && err.message === 'no valid bids (2 no matching GPU)')
    assert.equal(calls, ROUNDS_PER_ATTEMPT)
    assert.deepEqual(events[0], { type: 'auction', attempt: 1, event: { type: 'closed', bids: 0, valid: 0 } })

    calls = 0
    const later = auctionRounds({ auction: async () => (++calls < 2 ? noBids : awarded) }, spec(), {
      jobId: new Uint8Array(16)
    })
    assert.deepEqual(await later.next({ exclude: [], attempt: 1 }), award, 'a later round\'s award is taken')
  })
})

describe('submit: typed wiring', function () {
  this.timeout(30_000)
  let dir: Awaited<ReturnType<typeof tempDir>>
  before(async () => { dir = await tempDir() })
  after(async () => { await dir.cleanup() })
  const config = (role: Role, name: string): ReturnType<typeof resolveConfig> => resolveConfig({ role, flags: { dataDir: join(dir.path, name), listen: ['/ip4/127.0.0.1/tcp/0'] } })

  it('a node with the submit service but no market renter or ledger does not start', async () => {
    await assert.rejects(createNode(config('renter', 'bare'), { services: submitServices({ role: 'renter' }) }), (err: Error) => err.name === 'UnmetServiceDependenciesError')
  })

  it('renters run it with their auction and ledger and offer submit.job; other roles do not have it', async () => {
    assert.deepEqual(Object.keys(submitServices({ role: 'provider' })), [])
    assert.deepEqual(Object.keys(submitServices({ role: 'bootstrap' })), [])
    const c = config('renter', 'renter')
    const node = await createNode(c, roleExtensions(c))
    try {
      const submit = (node.libp2p.services as Record<string, unknown>)[SUBMIT_SERVICE] as SubmitService
      assert.deepEqual(Object.keys(submit[CONTROL_HANDLERS]()), ['submit.job'])
    } finally {
      await node.stop()
    }
  })
})
