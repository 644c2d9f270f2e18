import * as assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { isCoded } from '../../src/common/index.js'
import { IdentityError } from '../../src/identity/errors.js'
import { KEY_FILE, loadOrCreateKey } from '../../src/identity/keystore.js'

async function expectKeyFileError (fn: () => Promise<unknown>, path: string, pattern?: RegExp): Promise<IdentityError> {
  let caught: unknown
  try {
    await fn()
  } catch (err) {
    caught = err
  }
  if (!isCoded(caught, IdentityError, 'ERR_KEY_FILE')) assert.fail(`expected an IdentityError ERR_KEY_FILE, got ${String(caught)}`)
  assert.equal(caught.name, 'IdentityError')
  assert.equal(caught.code, 'ERR_KEY_FILE')
  assert.equal(caught.path, path)
  assert.ok(caught.message.includes(path), `message names the file: ${caught.message}`)
  if (pattern != null) assert.match(caught.message, pattern)
  return caught
}

describe('identity: key store', () => {
  let root: string

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'idlegrid-keystore-'))
  })

  afterEach(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('first run creates an Ed25519 node.key (0600) in a fresh data dir (0700)', async () => {
    const dataDir = join(root, 'nested', 'data')
    const key = await loadOrCreateKey(dataDir)
    assert.equal(key.type, 'Ed25519')
    assert.equal(key.raw.length, 64)

    assert.equal((await stat(dataDir)).mode & 0o777, 0o700, 'data directory is owner-only')
    const path = join(dataDir, KEY_FILE)
    assert.equal(KEY_FILE, 'node.key')
    assert.equal((await stat(path)).mode & 0o777, 0o600, 'key file is owner read/write only')
    assert.deepEqual(await readdir(dataDir), ['node.key'])

    // the file holds exactly this key, as a libp2p protobuf
    const onDisk = privateKeyFromProtobuf(await readFile(path))
    assert.ok(onDisk.equals(key))
  })

  it('a second call returns the same key (same peer id)', async () => {
    const first = await loadOrCreateKey(root)
    const bytesBefore = await readFile(join(root, KEY_FILE))
    const second = await loadOrCreateKey(root)
    assert.ok(second.equals(first))
    assert.deepEqual(second.raw, first.raw)
    assert.equal(peerIdFromPrivateKey(second).toString(), peerIdFromPrivateKey(first).toString())
    assert.deepEqual(await readFile(join(root, KEY_FILE)), bytesBefore, 'the key file is not rewritten')

    // a different data directory gets a different identity
    const other = await loadOrCreateKey(join(root, 'other'))
    assert.notEqual(peerIdFromPrivateKey(other).toString(), peerIdFromPrivateKey(first).toString())
  })

  it('reuses a key written by someone else (e.g. a restored backup)', async () => {
    const key = await generateKeyPair('Ed25519')
    const path = join(root, KEY_FILE)
    await writeFile(path, privateKeyToProtobuf(key), { mode: 0o600 })
    const loaded = await loadOrCreateKey(root)
    assert.equal(peerIdFromPrivateKey(loaded).toString(), peerIdFromPrivateKey(key).toString())
  })

  it('a corrupt key file is an ERR_KEY_FILE and is left byte-identical', async () => {
    const path = join(root, KEY_FILE)
    for (const corrupt of [new Uint8Array(randomBytes(68)), new Uint8Array(0), new TextEncoder().encode('not a key\n')]) {
      await writeFile(path, corrupt, { mode: 0o600 })
      await expectKeyFileError(async () => await loadOrCreateKey(root), path, /corrupt/)
      assert.deepEqual(new Uint8Array(await readFile(path)), corrupt, 'the corrupt file is untouched')
      assert.equal((await stat(path)).mode & 0o777, 0o600)
      assert.deepEqual(await readdir(root), ['node.key'], 'no replacement key was written beside it')
    }
  })

  it('a truncated real key file is an ERR_KEY_FILE, not a new identity', async () => {
    const path = join(root, KEY_FILE)
    const whole = privateKeyToProtobuf(await generateKeyPair('Ed25519'))
    const truncated = whole.subarray(0, whole.length - 5)
    await writeFile(path, truncated, { mode: 0o600 })
    await expectKeyFileError(async () => await loadOrCreateKey(root), path)
    assert.deepEqual(new Uint8Array(await readFile(path)), truncated)
  })

  it('a group/world-readable key file is an ERR_KEY_FILE that says to chmod it', async () => {
    const key = await loadOrCreateKey(root)
    const path = join(root, KEY_FILE)
    const bytes = await readFile(path)
    for (const mode of [0o644, 0o640, 0o604, 0o660]) {
      await chmod(path, mode)
      const err = await expectKeyFileError(async () => await loadOrCreateKey(root), path, /chmod 600/)
      assert.match(err.message, new RegExp(mode.toString(8)), 'message shows the mode found')
      assert.deepEqual(await readFile(path), bytes, 'file untouched')
      assert.equal((await stat(path)).mode & 0o777, mode, 'mode not changed behind the user\'s back')
    }
    // once fixed, the same key loads
    await chmod(path, 0o600)
    assert.ok((await loadOrCreateKey(root)).equals(key))
    // an owner-read-only key is fine too
    await chmod(path, 0o400)
    assert.ok((await loadOrCreateKey(root)).equals(key))
  })

  it('a secp256k1 or RSA key file is an ERR_KEY_FILE', async () => {
    const path = join(root, KEY_FILE)
    for (const type of ['secp256k1', 'RSA'] as const) {
      const bytes = privateKeyToProtobuf(type === 'RSA' ? await generateKeyPair('RSA', 1024) : await generateKeyPair('secp256k1'))
      await writeFile(path, bytes, { mode: 0o600 })
      await expectKeyFileError(async () => await loadOrCreateKey(root), path, new RegExp(`${type}.*Ed25519`))
      assert.deepEqual(new Uint8Array(await readFile(path)), new Uint8Array(bytes), 'file untouched')
    }
  })

  it('an unreadable key path (a directory) is an ERR_KEY_FILE', async () => {
    const path = join(root, KEY_FILE)
    await mkdir(path)
    await expectKeyFileError(async () => await loadOrCreateKey(root), path, /cannot be read/)
    assert.ok((await stat(path)).isDirectory(), 'left in place')
  })

  it('a data directory that cannot be created fails instead of using another place', async () => {
    const blocker = join(root, 'file')
    await writeFile(blocker, 'x')
    await assert.rejects(loadOrCreateKey(join(blocker, 'data')), (err: any) => err?.code === 'ENOTDIR')
  })
})
