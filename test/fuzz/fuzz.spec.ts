/**
 * The short seeded fuzz run of every target (CI's variant of `npm run fuzz`): FUZZ_SPEC_RUNS
 * inputs per target (default 100) from a fixed seed, so a failure reproduces. Each target must
 * see no crash (a throw other than its typed errors, or a bound broken) and no hang, and
 * must both accept and reject some inputs, so the harness is shown to reach past the first
 * check and to see rejections.
 */
import * as assert from 'node:assert/strict'
import { runTarget } from './engine.js'
import { TARGETS } from './targets/index.js'

const RUNS = Number(process.env.FUZZ_SPEC_RUNS ?? 100)
const SEED = Number(process.env.FUZZ_SEED ?? 19)
/** an input still running after this long is a hang (liveness, not speed: inputs take milliseconds) */
const HANG_MS = 5_000

describe('fuzz: every decoder and validator, short seeded run', function () {
  this.timeout(120_000)
  let accepted = 0
  let rejected = 0

  for (const factory of TARGETS) {
    it(`${factory.name}: ${RUNS} inputs, no crash, no hang`, async () => {
      const target = await factory.build()
      try {
        const stats = await runTarget(target, { runs: RUNS, seed: SEED, hangMs: HANG_MS, maxFailures: 3 })
        const detail = stats.failures.map(f => `${f.kind}: ${f.error}\n  input ${f.hex.slice(0, 400)}`).join('\n')
        assert.equal(stats.crashes + stats.hangs, 0, `${factory.name} broke:\n${detail}`)
        assert.equal(stats.inputs, RUNS)
        accepted += stats.accepted
        rejected += Object.values(stats.rejected).reduce((a, b) => a + b, 0)
      } finally {
        await target.close?.()
      }
    })
  }

  it('the run as a whole both accepted and rejected inputs', () => {
    assert.ok(accepted > 0, 'no input was accepted: the seeds do not reach past the first check')
    assert.ok(rejected > 0, 'no input was rejected: the mutations do not reach the checks')
  })
})
