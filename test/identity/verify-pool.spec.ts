/**
 * The verifier's worker pool (src/identity/verify-pool.ts) and its native library
 * (native-verify.ts): batches verified in workers agree item by item with the strict rule, a
 * handful is verified inline, a worker that dies loses no verdict, an idle pool lets its
 * process exit, and libsodium is the library this platform loads.
 */
import * as assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { NATIVE_VERIFIER, opensslVerify, sodiumVerify } from '../../src/identity/native-verify.js'
import { signBytes, signedMessage, verifyNobleSync, verifyNativeSync, verifyPrefixedInPool, type SignedBytes } from '../../src/identity/signature.js'
import { packBatch, unpackBatch, VERIFIER_THREAD_NAME } from '../../src/identity/verify-batch.js'
import { VerifyPool } from '../../src/identity/verify-pool.js'

async function signedItems (count: number, tamperEvery: number): Promise<SignedBytes[]> {
  const keys = await Promise.all([0, 1, 2].map(async () => await generateKeyPair('Ed25519')))
  return Array.from({ length: count }, (_, i) => {
    const key = keys[i % keys.length]
    const message = new Uint8Array(randomBytes(i % 300))
    const signature = signBytes(key.raw, message)
    if (i % tamperEvery === 0) signature[i % 64] ^= 1
    return { publicKey: key.publicKey.raw, message, signature }
  })
}

/**
 * Runs an ES module script as a file in a child Node; fails if it has not exited within 15 s. A
 * file, not `--input-type=module -e`: workers inherit that flag and then fail to start, and the
 * pool verifies inline, so a script run with it never had workers.
 */
async function runScript (script: string): Promise<{ code: number | null, out: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'idlegrid-pool-'))
  const file = join(dir, 'script.mjs')
  await writeFile(file, script)
  const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`the process did not exit; printed: ${out}`)) }, 15_000)
    child.on('exit', (c) => { clearTimeout(timer); resolve(c) })
  }).finally(async () => { await rm(dir, { recursive: true, force: true }) })
  return { code, out }
}

/** Absolute URLs for the child scripts' imports: they run from a temp dir. */
const KEYS_URL = import.meta.resolve('@libp2p/crypto/keys')
const moduleUrl = (path: string): string => new URL(path, import.meta.url).href

const inline = (item: SignedBytes): boolean => verifyNativeSync(item.publicKey, item.message, item.signature)

describe('identity: the verifier pool', function () {
  this.timeout(30_000)
  const pools: VerifyPool[] = []
  const pool = (opts: Partial<ConstructorParameters<typeof VerifyPool>[0]> = {}): VerifyPool => {
    const p = new VerifyPool({ verifyInline: inline, ...opts })
    pools.push(p)
    return p
  }
  afterEach(async () => { await Promise.all(pools.splice(0).map(async p => { await p.close() })) })

  it('libsodium is the native library here, and it agrees with OpenSSL on valid and tampered signatures', async () => {
    assert.equal(NATIVE_VERIFIER, 'libsodium', 'sodium-native\'s prebuilt binding did not load')
    for (const item of await signedItems(60, 3)) {
      const strict = verifyNobleSync(item.publicKey, item.message, item.signature)
      assert.equal(sodiumVerify(item.publicKey, item.message, item.signature), strict)
      assert.equal(opensslVerify(item.publicKey, item.message, item.signature), strict)
    }
    assert.equal(sodiumVerify(new Uint8Array(31), new Uint8Array(0), new Uint8Array(64)), false, 'a short key is a no, not a throw')
  })

  it('a batch packs and unpacks to the same items, and a truncated one is refused', async () => {
    const items = await signedItems(20, 1_000)
    const packed = new Uint8Array(packBatch(items))
    assert.deepEqual(unpackBatch(packed).map(i => [i.publicKey, i.signature, i.message].map(b => Buffer.from(b).toString('hex'))), items.map(i => [i.publicKey, i.signature, i.message].map(b => Buffer.from(b).toString('hex'))))
    assert.throws(() => unpackBatch(packed.subarray(0, packed.length - 1)), /runs past its end/)
  })

  it('an item signed over prefix ‖ message is packed with the two side by side, and verified as the whole message in workers and inline', async () => {
    // the envelope case: a domain's prefix and a payload, signed together, never joined by the caller
    const key = await generateKeyPair('Ed25519')
    const items: SignedBytes[] = Array.from({ length: 60 }, (_, i) => {
      const prefix = new Uint8Array(randomBytes(1 + (i % 20)))
      const message = new Uint8Array(randomBytes(i % 90))
      const signature = signBytes(
        key.raw,
        signedMessage({ publicKey: key.publicKey.raw, prefix, message, signature: new Uint8Array(0) })
      )
      // every fifth signs the message alone: it must not verify as prefix ‖ message
      return {
        publicKey: key.publicKey.raw,
        prefix,
        message,
        signature: i % 5 === 0 ? signBytes(key.raw, message) : signature
      }
    })
    const whole = items.map(i => Buffer.concat([i.prefix as Uint8Array, i.message]))
    assert.deepEqual(unpackBatch(new Uint8Array(packBatch(items))).map(i => Buffer.from(i.message).toString('hex')), whole.map(w => w.toString('hex')))
    const expected = items.map((item, i) => verifyNobleSync(item.publicKey, whole[i], item.signature))
    assert.equal(expected.filter(v => !v).length, 12)
    const p = pool({
      threads: 1,
      chunk: 16,
      verifyInline: item => verifyNativeSync(item.publicKey, signedMessage(item), item.signature)
    })
    assert.deepEqual(await Promise.all(items.map(async item => await p.verify(item))), expected)
    assert.equal(p.running, 1)
    assert.deepEqual(
      await Promise.all(
        items.map(
          async item =>
            await verifyPrefixedInPool(item.publicKey, item.prefix as Uint8Array, item.message, item.signature)
        )
      ),
      expected
    )
  })

  it('a batch goes to a worker, in chunks, and every verdict matches the strict rule in order', async () => {
    const p = pool({ threads: 2, chunk: 50 })
    const items = await signedItems(400, 7)
    const verdicts = await Promise.all(items.map(async item => await p.verify(item)))
    assert.equal(p.running, 2)
    assert.deepEqual(verdicts, items.map(i => verifyNobleSync(i.publicKey, i.message, i.signature)))
    assert.equal(verdicts.filter(v => !v).length, Math.ceil(400 / 7))
  })

  it('resize: fewer workers while chunks are in flight loses no verdict, 0 verifies inline, a bound outside 0-16 is refused', async () => {
    const p = pool({ threads: 2, chunk: 25 })
    const items = await signedItems(400, 9)
    const expected = items.map(i => verifyNobleSync(i.publicKey, i.message, i.signature))
    const inFlight = Promise.all(items.map(async item => await p.verify(item)))
    // the chunks are sent on the next turn; the resize comes once both workers hold some
    await new Promise(resolve => setImmediate(resolve))
    assert.equal(p.running, 2)
    p.resize(1)
    assert.equal(p.threads, 1)
    assert.deepEqual(await inFlight, expected, 'the retired worker\'s chunks are answered (by it, or inline)')
    assert.equal(p.running, 1)
    assert.deepEqual(await Promise.all(items.map(async item => await p.verify(item))), expected)
    assert.equal(p.running, 1, 'no second worker is started past the new bound')
    p.resize(0)
    assert.equal(p.running, 0)
    assert.deepEqual(await Promise.all(items.map(async item => await p.verify(item))), expected)
    assert.equal(p.running, 0, 'with 0 threads every batch is verified inline')
    for (const bad of [-1, 1.5, 17]) assert.throws(() => { p.resize(bad) }, RangeError)
  })

  it('on Linux each worker runs ten nice levels below the main thread, so a shared core goes to the main thread first', async function () {
    if (process.platform !== 'linux') this.skip()
    const p = pool({ threads: 2, chunk: 50 })
    const items = await signedItems(400, 7)
    await Promise.all(items.map(async item => await p.verify(item)))
    assert.equal(p.running, 2)
    const niceOf = (task: string): number => {
      const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8')
      // fields after the command's closing parenthesis; nice is the 19th field of the line
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
    }
    const main = niceOf(String(process.pid))
    const lowered = readdirSync('/proc/self/task').filter(t => niceOf(t) === Math.min(19, main + 10))
    assert.ok(lowered.length >= 2, `threads at nice ${Math.min(19, main + 10)}: ${lowered.length} (main thread at ${main})`)
  })

  it('on Linux each worker names its thread, so top -H and the benches can tell it apart', async function () {
    if (process.platform !== 'linux') this.skip()
    // in a process of its own: this one may hold other pools' workers
    const script = `
      const { readdirSync, readFileSync } = await import('node:fs')
      const { generateKeyPair } = await import(${JSON.stringify(KEYS_URL)})
      const { signBytes, verifyNativeSync } = await import(${JSON.stringify(moduleUrl('../../src/identity/signature.js'))})
      const { VerifyPool } = await import(${JSON.stringify(moduleUrl('../../src/identity/verify-pool.js'))})
      const key = await generateKeyPair('Ed25519')
      const items = Array.from({ length: 400 }, (_, i) => { const message = new Uint8Array([i, i >> 8]); return { publicKey: key.publicKey.raw, message, signature: signBytes(key.raw, message) } })
      const pool = new VerifyPool({ threads: 2, chunk: 50, verifyInline: (item) => verifyNativeSync(item.publicKey, item.message, item.signature) })
      await Promise.all(items.map(item => pool.verify(item)))
      const comm = (t) => readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim()
      console.log(JSON.stringify({ running: pool.running, named: readdirSync('/proc/self/task').filter(t => comm(t) === ${JSON.stringify(VERIFIER_THREAD_NAME)}).length, main: comm(process.pid) }))
      await pool.close()`
    const { code, out } = await runScript(script)
    assert.equal(code, 0)
    const seen = JSON.parse(out) as { running: number, named: number, main: string }
    assert.equal(seen.running, 2)
    assert.equal(seen.named, 2)
    assert.notEqual(seen.main, VERIFIER_THREAD_NAME)
  })

  it('a handful is verified inline: no worker is started for it', async () => {
    const p = pool({ threads: 1, minBatch: 16 })
    const items = await signedItems(5, 2)
    assert.deepEqual(
      await Promise.all(items.map(async i => await p.verify(i))),
      items.map(i => verifyNobleSync(i.publicKey, i.message, i.signature))
    )
    assert.equal(p.running, 0)
  })

  it('a worker stopped with chunks unanswered loses no verdict, and the next batch starts a new one', async () => {
    let inlined = 0
    const p = pool({ threads: 1, chunk: 32, verifyInline: (item) => { inlined++; return inline(item) } })
    const items = await signedItems(1_000, 50)
    const pending = Promise.all(items.map(async item => await p.verify(item)))
    // the flush runs on the next turn: stop the worker once its chunks are sent
    await new Promise(resolve => setImmediate(resolve))
    assert.equal(p.running, 1)
    await p.close()
    assert.deepEqual(await pending, items.map(i => verifyNobleSync(i.publicKey, i.message, i.signature)))
    assert.ok(inlined > 0, 'chunks were unanswered when the worker stopped: their verdicts came inline')
    const again = await signedItems(40, 4)
    inlined = 0
    assert.deepEqual(
      await Promise.all(again.map(async i => await p.verify(i))),
      again.map(i => verifyNobleSync(i.publicKey, i.message, i.signature))
    )
    assert.equal(p.running, 1)
    assert.equal(inlined, 0, 'the next batch went to the new worker')
  })

  it('a pool closed before its workers answered is not a pool whose workers fail to start: it still uses workers after three closes', async () => {
    let inlined = 0
    const p = pool({ threads: 1, chunk: 32, verifyInline: (item) => { inlined++; return inline(item) } })
    const items = await signedItems(100, 10)
    const expected = items.map(i => verifyNobleSync(i.publicKey, i.message, i.signature))
    for (let round = 0; round < 3; round++) {
      const pending = Promise.all(items.map(async item => await p.verify(item)))
      await new Promise(resolve => setImmediate(resolve))
      assert.equal(p.running, 1)
      await p.close()
      assert.deepEqual(await pending, expected)
    }
    assert.ok(inlined > 0, 'each close stopped a worker before it answered')
    inlined = 0
    assert.deepEqual(await Promise.all(items.map(async item => await p.verify(item))), expected)
    assert.equal(p.running, 1)
    assert.equal(inlined, 0, 'the fourth batch went to a worker')
  })

  it('a process exits by itself when one of its pool\'s workers never got a chunk', async () => {
    const script = `
      const { generateKeyPair } = await import(${JSON.stringify(KEYS_URL)})
      const { VerifyPool } = await import(${JSON.stringify(moduleUrl('../../src/identity/verify-pool.js'))})
      const { signBytes, verifyNativeSync } = await import(${JSON.stringify(moduleUrl('../../src/identity/signature.js'))})
      const key = await generateKeyPair('Ed25519')
      const p = new VerifyPool({ threads: 2, chunk: 128, verifyInline: (i) => verifyNativeSync(i.publicKey, i.message, i.signature) })
      const items = Array.from({ length: 50 }, (_, i) => { const message = new Uint8Array([i]); return { publicKey: key.publicKey.raw, message, signature: signBytes(key.raw, message) } })
      const verdicts = await Promise.all(items.map((i) => p.verify(i)))
      console.log(p.running === 2 && verdicts.every(Boolean) ? 'one chunk, two workers' : 'unexpected: ' + p.running)`
    const { code, out } = await runScript(script)
    assert.equal(out.trim(), 'one chunk, two workers')
    assert.equal(code, 0)
  })

  it('a process whose pool is idle exits by itself once its verdicts are in', async () => {
    const script = `
      const { generateKeyPair } = await import(${JSON.stringify(KEYS_URL)})
      const { signBytes, verifyManyInPool } = await import(${JSON.stringify(moduleUrl('../../src/identity/signature.js'))})
      const key = await generateKeyPair('Ed25519')
      const items = Array.from({ length: 200 }, (_, i) => { const message = new Uint8Array([i]); return { publicKey: key.publicKey.raw, message, signature: signBytes(key.raw, message) } })
      const verdicts = await verifyManyInPool(items, 200)
      console.log(verdicts.every(Boolean) ? 'all verified' : 'a verdict is wrong')`
    const { code, out } = await runScript(script)
    assert.equal(code, 0)
    assert.equal(out.trim(), 'all verified')
  })
})
