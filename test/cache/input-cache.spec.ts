import { strict as assert } from 'node:assert'
import { createHash } from 'node:crypto'
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { InputCache } from '../../src/cache/index.js'
import { DiskBudget } from '../../src/exec/provider/admission.js'
import { tempDir } from '../utils/index.js'

const A = 'renter-a'
const B = 'renter-b'

interface Made { file: string, entry: { size: bigint, sha256: Uint8Array, public?: boolean } }

describe('input cache: a provider keeps job inputs by digest', function () {
  let tmp: { path: string, cleanup: () => Promise<void> }
  let n = 0
  beforeEach(async () => { tmp = await tempDir('idlegrid-cache-') })
  afterEach(async () => { await tmp.cleanup() })

  /** A job input file of `bytes` (content varies with `seed`), as the provider received it. */
  async function input (bytes: number, seed: number, pub = false): Promise<Made> {
    const data = Buffer.alloc(bytes, seed)
    const dir = join(tmp.path, `job-${n++}`)
    await mkdir(dir, { recursive: true })
    const file = join(dir, 'in.bin')
    await writeFile(file, data)
    return { file, entry: { size: BigInt(bytes), sha256: createHash('sha256').update(data).digest(), ...(pub ? { public: true } : {}) } }
  }

  async function open (
    budgetBytes: number,
    more: Partial<ConstructorParameters<typeof InputCache>[0]> = {}
  ): Promise<InputCache> {
    const cache = new InputCache({ dir: join(tmp.path, 'cache'), budgetBytes, ...more })
    await cache.load()
    return cache
  }

  it('keeps a received input for its renter: held, linked read-only into a job dir, same bytes', async () => {
    const cache = await open(1 << 20)
    const x = await input(4096, 7)
    assert.equal(await cache.put(A, x.file, x.entry), true)
    assert.deepEqual(cache.held(A, [x.entry.sha256]), { count: 1, bytes: 4096 })
    const holding = await cache.hold(A, [x.entry])
    assert.equal(holding.digests.size, 1)
    const dest = join(tmp.path, 'job-next', 'inputs', 'in.bin')
    await cache.materialize(Buffer.from(x.entry.sha256).toString('hex'), dest)
    holding.release()
    assert.deepEqual(await readFile(dest), await readFile(x.file))
    assert.equal((await stat(dest)).mode & 0o777, 0o444, 'a cached input is read-only')
    assert.equal(cache.stats().hits, 1)
  })

  it('never serves a private entry to another renter; a public one to anyone', async () => {
    const cache = await open(1 << 20)
    const secret = await input(4096, 1)
    const open1 = await input(4096, 2, true)
    await cache.put(A, secret.file, secret.entry)
    await cache.put(A, open1.file, open1.entry)
    assert.deepEqual(cache.held(B, [secret.entry.sha256, open1.entry.sha256]), { count: 1, bytes: 4096 }, 'B may reuse only the public file')
    const holding = await cache.hold(B, [secret.entry, open1.entry])
    assert.deepEqual([...holding.digests], [Buffer.from(open1.entry.sha256).toString('hex')])
    holding.release()
    await assert.rejects(cache.materialize(Buffer.from(secret.entry.sha256).toString('hex'), join(tmp.path, 'x')), /not held/)
    assert.deepEqual(cache.publicDigests(10).map(d => Buffer.from(d).toString('hex')), [Buffer.from(open1.entry.sha256).toString('hex')])
    // B brings the same bytes itself: now it may reuse them too (it proved it has them)
    const same = await input(4096, 1)
    await cache.put(B, same.file, same.entry)
    assert.equal(cache.held(B, [secret.entry.sha256]).count, 1)
  })

  it('a size that differs from the entry\'s is not held', async () => {
    const cache = await open(1 << 20)
    const x = await input(4096, 3)
    await cache.put(A, x.file, x.entry)
    const holding = await cache.hold(A, [{ ...x.entry, size: 4095n }])
    assert.equal(holding.digests.size, 0)
  })

  it('evicts the least recently used entries to stay within its budget, never a pinned one', async () => {
    const cache = await open(10_000)
    const [x, y, z] = [await input(4000, 1), await input(4000, 2), await input(4000, 3)]
    await cache.put(A, x.file, x.entry)
    await cache.put(A, y.file, y.entry)
    // x used again: y is now the least recently used
    const pinned = await cache.hold(A, [x.entry])
    await cache.put(A, z.file, z.entry)
    assert.equal(cache.held(A, [y.entry.sha256]).count, 0, 'y evicted')
    assert.equal(cache.held(A, [x.entry.sha256, z.entry.sha256]).count, 2)
    assert.ok(cache.usedBytes() <= 10_000)
    // with x pinned, a fourth file takes z's place
    const w = await input(6000, 4)
    assert.equal(await cache.put(A, w.file, w.entry), true, 'z goes, x is pinned')
    assert.equal(cache.held(A, [x.entry.sha256]).count, 1)
    const v = await input(7000, 6)
    assert.equal(await cache.put(A, v.file, v.entry), false, 'no room: x is pinned, and 4000 + 7000 is over the budget')
    const big = await input(20_000, 5)
    assert.equal(await cache.put(A, big.file, big.entry), false, 'larger than the budget')
    pinned.release()
    await cache.close()
    assert.equal((await readdir(join(tmp.path, 'cache'))).filter(f => f !== 'index.json').length <= 2, true)
  })

  it('bytes changed on disk are found before use, dropped, and not held', async () => {
    const cache = await open(1 << 20)
    const x = await input(4096, 9)
    await cache.put(A, x.file, x.entry)
    // a job (same user) makes its linked input writable and changes it: the cache's file is the same inode
    await chmod(x.file, 0o644)
    await writeFile(x.file, Buffer.alloc(4096, 10))
    const holding = await cache.hold(A, [x.entry])
    assert.equal(holding.digests.size, 0)
    assert.equal(cache.stats().dropped, 1)
    assert.equal(cache.held(A, [x.entry.sha256]).count, 0)
  })

  it('a file whose metadata changed but whose bytes did not is hashed again and kept', async () => {
    const cache = await open(1 << 20)
    const x = await input(4096, 11)
    await cache.put(A, x.file, x.entry)
    await chmod(x.file, 0o400)
    const holding = await cache.hold(A, [x.entry])
    assert.equal(holding.digests.size, 1)
    assert.equal(cache.stats().dropped, 0)
  })

  it('comes back after a restart with its entries and owners; stray files go, a lowered budget applies', async () => {
    const first = await open(1 << 20)
    const [x, y] = [await input(4096, 1), await input(4096, 2)]
    await first.put(A, x.file, x.entry)
    await first.put(B, y.file, y.entry)
    await first.close()
    await writeFile(join(tmp.path, 'cache', 'f'.repeat(64)), 'stray')
    const again = await open(1 << 20)
    assert.equal(again.held(A, [x.entry.sha256]).count, 1)
    assert.equal(again.held(A, [y.entry.sha256]).count, 0, 'owners survive the restart')
    assert.ok(!(await readdir(join(tmp.path, 'cache'))).includes('f'.repeat(64)), 'a file no entry names is removed')
    await again.close()
    const smaller = await open(5000)
    assert.equal(smaller.stats().entries, 1)
    assert.ok(smaller.usedBytes() <= 5000)
  })

  it('a damaged index leaves an empty cache, not a provider that cannot start', async () => {
    await mkdir(join(tmp.path, 'cache'), { recursive: true })
    await writeFile(join(tmp.path, 'cache', 'index.json'), '{"version":1,"entries":[{"sha256":"../../etc"}')
    const cache = await open(1 << 20)
    assert.equal(cache.stats().entries, 0)
  })

  it('counts inside the disk budget: a job that needs the room makes the cache evict', async () => {
    const cache = await open(10_000)
    const disk = new DiskBudget(12_000)
    disk.includeCache(cache)
    const x = await input(8000, 1)
    await cache.put(A, x.file, x.entry)
    disk.check(4000)
    assert.equal(cache.stats().entries, 1, 'room enough beside the cache')
    disk.check(6000)
    assert.equal(cache.stats().entries, 0, 'the cache gave its room to the job')
    const y = await input(8000, 2)
    await cache.put(A, y.file, y.entry)
    const pinned = await cache.hold(A, [y.entry])
    assert.throws(() => { disk.check(6000) }, /disk budget full/)
    pinned.release()
  })
})
