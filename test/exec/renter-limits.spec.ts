/**
 * Issue 13 item 4: a malicious provider must not exhaust the renter. The renter enforces its
 * own limits (log bytes, output files, depth, output bytes, a hard deadline), whatever the
 * provider claims to cap; a provider past one fails the attempt and the job moves on to
 * another provider; what a provider sends is escaped before it is printed.
 */
import { strict as assert } from 'node:assert'
import { randomBytes } from 'node:crypto'
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { PROTOCOL } from '../../protocols/ids.js'
import { progress } from '../../src/cli/commands/submit-job.js'
import { OutputFiles } from '../../src/exec/renter/attempt-follow.js'
import { RENTER_LIMITS, printable } from '../../src/exec/renter/attempt-limits.js'
import { isRenterLimit, isStreamError } from '../../src/exec/errors.js'
import { runAttempt, type JobPayload } from '../../src/exec/renter/attempt.js'
import { ConfigError } from '../../src/config/index.js'
import { parseJobSpec } from '../../src/market/renter/job-spec.js'
import { renterLimitsFromSpec } from '../../src/submit/payload.js'
import { runJob } from '../../src/submit/run-job.js'
import { recordAttack, tempDir, waitFor, type InProcessNetwork } from '../utils/index.js'
import { ESCAPES, copyJob, makeAward, misbehavingProvider, renterAnswers, startJobNetwork, type Misbehaviour } from './fixtures.js'

/** Every file under `dir` and the deepest directory nesting. */
async function walk (dir: string): Promise<{ files: number, depth: number }> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  let files = 0
  let depth = 0
  for (const e of entries) {
    if (e.isFile()) files++
    const rel = join(e.parentPath, e.name).slice(dir.length + 1)
    depth = Math.max(depth, rel.split('/').length - (e.isFile() ? 1 : 0))
  }
  return { files, depth }
}

describe('red team: exec renter limits (issue 13)', function () {
  this.timeout(120_000)
  let net: InProcessNetwork
  let tmp: { path: string, cleanup: () => Promise<void> }
  let payload: JobPayload

  before(async () => {
    tmp = await tempDir('idlegrid-renter-limits-')
    net = await startJobNetwork(tmp.path)
    payload = await copyJob(tmp.path)
  })

  after(async () => {
    await net?.stop()
    await tmp?.cleanup()
  })

  const renter = (): InProcessNetwork['renters'][number] => net.renters[0] as InProcessNetwork['renters'][number]
  const bad = (): InProcessNetwork['providers'][number] => net.providers[2] as InProcessNetwork['providers'][number]
  const attemptOpts = (dir: string): Parameters<typeof runAttempt>[2] => ({
    libp2p: renter().libp2p,
    privateKey: renter().privateKey,
    peerId: renter().peerId,
    dir: join(tmp.path, dir),
    idleMs: 5_000
  })
  const misbehave = async (mode: Misbehaviour): Promise<void> => {
    await bad().libp2p.unhandle(PROTOCOL.job)
    await misbehavingProvider(bad(), mode)
  }

  it('a 64 MiB log stops at the renter\'s log limit: the attempt is bad_output, log.txt and memory stay bounded', async () => {
    await misbehave('huge-log')
    const base = process.memoryUsage().rss
    let peak = base
    const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 20)
    const maxLogBytes = 4 * 1024 * 1024
    try {
      const result = await runAttempt(makeAward(renter(), bad().peerId), payload, { ...attemptOpts('huge-log'), limits: { maxLogBytes } })
      assert.equal(result.outcome, 'bad_output', result.detail)
      assert.match(result.detail ?? '', /limit log-bytes: .*more than 4194304 bytes of log/)
      assert.equal(result.verified, false)
      assert.equal(result.receipt, undefined)
      const size = (await stat(join(result.dir, 'log.txt'))).size
      assert.ok(size <= maxLogBytes, `log.txt holds ${size} bytes`)
    } finally {
      clearInterval(sampler)
    }
    // provider and renter share this process (about 80 MiB measured for both); a renter holding
    // the 64 MiB log as strings would need 128 MiB for it alone
    assert.ok(peak - base < 128 * 1024 * 1024, `rss grew by ${((peak - base) / 1024 / 1024).toFixed(1)} MiB`)
    recordAttack({ issue: '13.4', attack: 'provider sends a 64 MiB log', got: `bad_output; log.txt ≤ 4 MiB; rss +${((peak - base) / 1024 / 1024).toFixed(0)} MiB (both peers)`, limit: 'renter log limit (default 16 MiB)' })
  })

  it('5,000 output files stop at the renter\'s limit of 4,096: bad_output, no more files on disk', async () => {
    await misbehave('many-files')
    const result = await runAttempt(makeAward(renter(), bad().peerId), payload, attemptOpts('many-files'))
    assert.equal(result.outcome, 'bad_output', result.detail)
    assert.match(result.detail ?? '', /limit files: the provider sent more than 4096 output files/)
    const { files } = await walk(join(result.dir, 'outputs'))
    assert.ok(files <= RENTER_LIMITS.maxFiles, `${files} files on disk`)
    recordAttack({ issue: '13.4', attack: 'provider sends 5,000 output files', got: `bad_output; ${files} files on disk`, limit: `renter file limit ${RENTER_LIMITS.maxFiles}` })
  })

  it('an output 40 directories deep is refused before any directory is made: bad_output', async () => {
    await misbehave('deep-dirs')
    const result = await runAttempt(makeAward(renter(), bad().peerId), payload, attemptOpts('deep-dirs'))
    assert.equal(result.outcome, 'bad_output', result.detail)
    assert.match(result.detail ?? '', /limit depth: .* 40 directories deep; the renter's limit is 32/)
    const { depth } = await walk(join(result.dir, 'outputs'))
    assert.ok(depth <= RENTER_LIMITS.maxDepth, `outputs nest ${depth} deep`)
    recordAttack({ issue: '13.4', attack: 'provider sends a file 40 directories deep', got: `bad_output; outputs nest ${depth} deep`, limit: `renter depth limit ${RENTER_LIMITS.maxDepth}` })
  })

  it('progress frames do not keep a job alive past time limit + grace + margin: the attempt is lost at the deadline', async () => {
    await misbehave('endless-progress')
    const started = Date.now()
    const short: JobPayload = { ...payload, runtime: { ...payload.runtime, timeoutMs: 1_000 } }
    const result = await runAttempt(makeAward(renter(), bad().peerId), short, { ...attemptOpts('endless'), limits: { deadlineGraceMs: 500, deadlineMarginMs: 500 } })
    const took = Date.now() - started
    assert.equal(result.outcome, 'lost', result.detail)
    assert.match(result.detail ?? '', /limit deadline: the provider was still running the job 2000 ms after accepting it/)
    assert.ok(took < 6_000, `the attempt took ${took} ms`)
    recordAttack({ issue: '13.4', attack: 'provider keeps a 1 s job alive with progress frames', got: `lost after ${took} ms`, limit: 'hard deadline: time limit + grace + margin' })
  })

  it('escape sequences in log lines and file names are escaped before they are printed', async () => {
    await misbehave('escape-sequences')
    const events: any[] = []
    const result = await runAttempt(makeAward(renter(), bad().peerId), payload, { ...attemptOpts('escapes'), onEvent: e => events.push(e) })
    // the bytes are kept as sent (the digest covers them), only printing escapes them
    assert.equal(result.outcome, 'ok', result.detail)
    assert.ok(result.outputs.some(f => f.path === ESCAPES.path))
    const printed: string[] = []
    for (const e of events) progress(e, { info: (line: string) => { printed.push(line) } })
    progress({ type: 'attempt-ended', attempt: 1, provider: 'p', outcome: 'bad_output', detail: `output ${ESCAPES.path} sent twice` }, { info: (line: string) => { printed.push(line) } })
    const text = printed.join('\n')
    assert.ok(text.includes('hello \\x1b]0;pwned\\x07\\x1b[2J\\x9b31m'), text)
    assert.ok(text.includes('red\\x1b[31m.txt'), text)
    assert.doesNotMatch(text, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/) // eslint-disable-line no-control-regex
    assert.equal(printable('a\tb\u2028c\u202ed'), 'a\tb\\u2028c\\u202ed')
  })

  it('a provider that breaks a limit is left for another: the job ends ok on the next provider', async () => {
    await misbehave('many-files')
    const honest = net.providers[1] as InProcessNetwork['providers'][number]
    const jobId = new Uint8Array(randomBytes(16))
    const order = [bad().peerId, honest.peerId]
    const summary = await runJob({
      libp2p: renter().libp2p,
      privateKey: renter().privateKey,
      peerId: renter().peerId,
      awards: {
        next: async ({ exclude, attempt }) => {
          const winner = order.find(p => !exclude.includes(p.toString()))
          if (winner == null) throw new Error('no provider left')
          return makeAward(renter(), winner, { attempt, jobId })
        }
      },
      jobId: Buffer.from(jobId).toString('hex'),
      baseDir: join(tmp.path, 'failover'),
      idleMs: 10_000,
      payload
    })
    assert.equal(summary.status, 'ok', summary.detail)
    assert.equal(summary.history[0]?.outcome, 'bad_output')
    assert.match(summary.history[0]?.detail ?? '', /limit files/)
    assert.equal(summary.history[1]?.outcome, 'ok')
  })

  it('an attestation naming other inputs than those sent: bad_attestation, no receipt, the job ends ok on the next provider', async () => {
    await misbehave('wrong-input-digest')
    const honest = net.providers[1] as InProcessNetwork['providers'][number]
    const jobId = new Uint8Array(randomBytes(16))
    const order = [bad().peerId, honest.peerId]
    const summary = await runJob({
      libp2p: renter().libp2p,
      privateKey: renter().privateKey,
      peerId: renter().peerId,
      awards: {
        next: async ({ exclude, attempt }) =>
          makeAward(renter(), order.find(p => !exclude.includes(p.toString())) ?? honest.peerId, { attempt, jobId })
      },
      jobId: Buffer.from(jobId).toString('hex'),
      baseDir: join(tmp.path, 'input-digest'),
      idleMs: 10_000,
      payload
    })
    const first = summary.history[0]
    assert.equal(first?.provider, bad().peerId.toString())
    assert.equal(first?.outcome, 'bad_attestation', first?.detail)
    assert.match(first?.detail ?? '', /attestation names other inputs than those sent/)
    // the renter signs nothing for an attestation about other inputs, and keeps none of its outputs as verified
    await assert.rejects(stat(join(first?.dir ?? '', 'receipt.bin')), { code: 'ENOENT' })
    // it verifies but answers other inputs: the provider is told BAD_ATTESTATION, not BAD_SIGNATURE
    await waitFor(() => renterAnswers.get('wrong-input-digest') === 'BAD_ATTESTATION', { what: `BAD_ATTESTATION told to the provider (heard ${renterAnswers.get('wrong-input-digest') ?? 'nothing'})` })
    assert.equal(summary.status, 'ok', summary.detail)
    assert.equal(summary.history[1]?.outcome, 'ok')
    assert.equal(summary.history[1]?.provider, honest.peerId.toString())
    recordAttack({ issue: '13.4', attack: 'provider attests an input digest other than the inputs sent (INPUT_MISMATCH)', got: `attempt ${first?.outcome ?? '?'}, no receipt; job ${summary.status} on the next provider`, limit: 'renter checks the attestation\'s input digest against the manifest it sent' })
  })

  it('the job\'s disk budget holds across attempts: a provider that fills it ends the job instead of the renter\'s disk', async () => {
    await misbehave('huge-log')
    const honest = net.providers[1] as InProcessNetwork['providers'][number]
    const jobId = new Uint8Array(randomBytes(16))
    const maxJobDiskBytes = 2 * 1024 * 1024
    const summary = await runJob({
      libp2p: renter().libp2p,
      privateKey: renter().privateKey,
      peerId: renter().peerId,
      awards: {
        next: async ({ exclude, attempt }) =>
          makeAward(
            renter(),
            [bad().peerId, honest.peerId].find(p => !exclude.includes(p.toString())) ?? honest.peerId,
            { attempt, jobId }
          )
      },
      jobId: Buffer.from(jobId).toString('hex'),
      baseDir: join(tmp.path, 'disk'),
      idleMs: 10_000,
      limits: { maxJobDiskBytes },
      payload
    })
    assert.equal(summary.attempts, 1)
    assert.equal(summary.status, 'bad_output')
    assert.match(summary.history[0]?.detail ?? '', /limit disk: .*disk budget/)
    assert.match(summary.detail ?? '', /disk budget is spent/)
    const size = (await stat(join(summary.history[0]?.dir ?? '', 'log.txt'))).size
    assert.ok(size <= maxJobDiskBytes, `log.txt holds ${size} bytes`)
  })

  it('duplicate and file/directory clashes are still refused, with set lookups', async () => {
    const files = new OutputFiles(join(tmp.path, 'dups'), { maxFiles: 10 })
    const chunk = (path: string): { path: string, offset: bigint, data: Uint8Array } => ({
      path,
      offset: 0n,
      data: Uint8Array.of(1)
    })
    await files.write(chunk('a/b.txt'))
    await files.write(chunk('c'))
    for (const path of ['a/b.txt', 'a', 'c/d.txt']) {
      const f = new OutputFiles(join(tmp.path, `dups-${path.replace(/\//g, '_')}`), { maxFiles: 10 })
      await f.write(chunk('a/b.txt'))
      await f.write(chunk('c'))
      await assert.rejects(f.write(chunk(path)), (err: any) => isStreamError(err) && err.wireCode === 'PROTOCOL' && /sent twice/.test(err.message), path)
      await f.abandon()
    }
    await files.write(chunk('a/e.txt'))
    await files.finish()
    assert.deepEqual(files.entries().map(e => e.path), ['a/b.txt', 'a/e.txt', 'c'])
    const few = new OutputFiles(join(tmp.path, 'few'), { maxFiles: 1, maxDepth: 1 })
    await assert.rejects(few.write(chunk('x/y/z')), (err: any) => isRenterLimit(err) && err.limit === 'depth')
    await few.write(chunk('x/y'))
    await assert.rejects(few.write(chunk('z')), (err: any) => isRenterLimit(err) && err.limit === 'files')
    await few.abandon()
  })

  it('the job file\'s limits: are validated and become the renter\'s limits', () => {
    const base = { runtime: { command: ['true'] } }
    const spec = parseJobSpec({
      ...base,
      limits: {
        maxLogMiB: 2,
        maxOutputFiles: 100,
        maxOutputDepth: 4,
        maxOutputMiB: 0.5 * 2,
        deadlineMarginSeconds: 10,
        maxDiskMiB: 3
      }
    })
    assert.deepEqual(renterLimitsFromSpec(spec.limits), {
      maxLogBytes: 2 * 1024 * 1024,
      maxFiles: 100,
      maxDepth: 4,
      maxOutputBytes: 1024 * 1024,
      deadlineMarginMs: 10_000,
      maxJobDiskBytes: 3 * 1024 * 1024
    })
    assert.deepEqual(renterLimitsFromSpec(parseJobSpec(base).limits), {})
    // the parsed spec parses again (the CLI sends it to the node as is)
    assert.deepEqual(parseJobSpec(spec), spec)
    assert.throws(() => parseJobSpec({ ...base, limits: { maxOutputFiles: 5000 } }), (err: any) => err instanceof ConfigError && /limits\.maxOutputFiles/.test(err.message) && /<= 4096/.test(err.message))
    assert.throws(() => parseJobSpec({ ...base, limits: { maxOutputDepth: 2.5 } }), (err: any) => err instanceof ConfigError && /limits\.maxOutputDepth/.test(err.message) && /whole number/.test(err.message))
    assert.throws(() => parseJobSpec({ ...base, limits: { maxLogBytes: 1 } }), (err: any) => err instanceof ConfigError && /maxLogBytes/.test(err.message))
  })
})
