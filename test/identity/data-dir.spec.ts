import * as assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { chmod, chown, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isCoded } from '../../src/common/index.js'
import { IdentityError } from '../../src/identity/errors.js'
import { KEY_FILE, loadOrCreateKey } from '../../src/identity/keystore.js'
import { otherUser } from '../utils/index.js'

async function expectDataDirError (dataDir: string, pattern: RegExp): Promise<IdentityError> {
  let caught: unknown
  try {
    await loadOrCreateKey(dataDir)
  } catch (err) {
    caught = err
  }
  if (!isCoded(caught, IdentityError, 'ERR_DATA_DIR_PERMISSIONS')) assert.fail(`expected an IdentityError ERR_DATA_DIR_PERMISSIONS, got ${String(caught)}`)
  assert.equal(caught.name, 'IdentityError')
  assert.equal(caught.code, 'ERR_DATA_DIR_PERMISSIONS')
  assert.equal(caught.path, dataDir)
  assert.ok(caught.message.includes(dataDir), `message names the directory: ${caught.message}`)
  assert.match(caught.message, pattern)
  return caught
}

/** Runs the fix an ERR_DATA_DIR_PERMISSIONS gives ("…; run chmod 700 DIR") in a shell. */
async function runFix (err: IdentityError): Promise<void> {
  const command = err.message.split('; run ')[1]
  assert.ok(command != null, `the message ends with a command: ${err.message}`)
  await new Promise<void>((resolve, reject) => {
    execFile('/bin/sh', ['-c', command], (error) => { if (error != null) reject(error); else resolve() })
  })
}

describe('identity: data directory permissions', () => {
  let root: string

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'idlegrid-datadir-'))
  })

  afterEach(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('a group-writable data dir is refused before the key is read, naming the fix (chmod 700 DIR)', async () => {
    // a corrupt key inside: had it been read, this would be an ERR_KEY_FILE
    await writeFile(join(root, KEY_FILE), 'not a key', { mode: 0o600 })
    for (const mode of [0o770, 0o775, 0o730]) {
      await chmod(root, mode)
      const err = await expectDataDirError(root, new RegExp(`is group-writable \\(mode ${mode.toString(8)}\\).*run chmod 700 ${root}$`))
      assert.equal((await stat(root)).mode & 0o777, mode, 'the mode is not changed behind the user\'s back')
      assert.equal(await readFile(join(root, KEY_FILE), 'utf8'), 'not a key', 'the key file is untouched')
      if (mode === 0o730) await runFix(err)
    }
    // the fix in the message works: now the key is read (and found corrupt)
    assert.equal((await stat(root)).mode & 0o777, 0o700)
    await assert.rejects(loadOrCreateKey(root), (err: unknown) => isCoded(err, IdentityError, 'ERR_KEY_FILE'))
  })

  it('a world-writable data dir is refused, the sticky bit too, and no key is created in it', async () => {
    for (const mode of [0o707, 0o703, 0o777, 0o1777]) {
      await chmod(root, mode)
      await expectDataDirError(root, /-writable \(mode 7\d\d\).*chmod 700/)
      assert.match((await expectDataDirError(root, /world-writable/)).message, mode === 0o777 || mode === 0o1777 ? /group- and world-writable/ : /is world-writable/)
      assert.deepEqual(await readdir(root), [], 'nothing written')
    }
  })

  it('a data dir owned by another user is refused, even with mode 0700 (as root, chown to nobody)', async function () {
    const user = await otherUser()
    if (typeof user === 'string') {
      console.log(`      skipped: ${user}`)
      this.skip()
    }
    const dataDir = join(root, 'theirs')
    await mkdir(dataDir, { mode: 0o700 })
    await chown(dataDir, user.uid, user.gid)
    await expectDataDirError(dataDir, new RegExp(`owned by uid ${user.uid}, not by this user \\(uid 0\\).*chown 0 ${dataDir} && chmod 700 ${dataDir}`))
    assert.deepEqual(await readdir(dataDir), [], 'no key written into it')
  })

  it('accepts what only its owner can write: 0700 (as created), 0750, 0755, 0711, and a symlink to such a dir', async () => {
    const fresh = join(root, 'a', 'b')
    await loadOrCreateKey(fresh)
    assert.equal((await stat(fresh)).mode & 0o777, 0o700)
    for (const mode of [0o750, 0o755, 0o711]) {
      await chmod(fresh, mode)
      await loadOrCreateKey(fresh)
    }
    const link = join(root, 'link')
    await symlink(fresh, link)
    await loadOrCreateKey(link)
  })

  it('a file where the data dir should be is refused; a path with quotes gets a fix a shell runs as written', async () => {
    const file = join(root, 'file')
    await writeFile(file, 'x')
    await expectDataDirError(file, /is not a directory; pick another --data-dir/)

    const odd = join(root, "it's a dir")
    await mkdir(odd, { mode: 0o700 })
    await chmod(odd, 0o777)
    await runFix(await expectDataDirError(odd, /chmod 700 '/))
    assert.equal((await stat(odd)).mode & 0o777, 0o700)
    await loadOrCreateKey(odd)
  })
})
