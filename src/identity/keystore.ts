import { mkdir, open, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys'
import { IdentityError } from './errors.js'
import type { Ed25519PrivateKey, PrivateKey } from '@libp2p/interface'

export const KEY_FILE = 'node.key'

/** A key file left untouched: ERR_KEY_FILE. */
function keyFileError (path: string, problem: string): IdentityError {
  return new IdentityError('ERR_KEY_FILE', `node key ${path}: ${problem}; it was left untouched (move it away to create a new identity)`, { path })
}

/**
 * A data directory others could write (group- or world-writable, or owned by another user):
 * whoever can write it can swap the node's key, ledger or control socket, so no node starts
 * on it. A mistake in the setup, reported with the fix: ERR_DATA_DIR_PERMISSIONS (exit code 2
 * from the CLI).
 */
function dataDirError (path: string, problem: string, fix: string): IdentityError {
  return new IdentityError('ERR_DATA_DIR_PERMISSIONS', `data directory ${path} ${problem}; ${fix}`, { path })
}

/**
 * Creates the data directory (owner-only) when it does not exist, and refuses one that others
 * can write: it must be a directory owned by this user with no group or world write bit.
 */
export async function ensureDataDir (dataDir: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 }).catch((err: any) => {
    if (err?.code !== 'EEXIST') throw err // a file in its place: reported below
  })
  const info = await stat(dataDir)
  const quoted = shellQuote(dataDir)
  const risk = 'so other users could replace its key, ledger or control socket'
  if (!info.isDirectory()) throw dataDirError(dataDir, 'is not a directory', 'pick another --data-dir')
  const uid = process.getuid?.()
  if (uid != null && info.uid !== uid) {
    throw dataDirError(dataDir, `is owned by uid ${info.uid}, not by this user (uid ${uid}), ${risk}`, `use a directory you own (another --data-dir), or take it over: chown ${uid} ${quoted} && chmod 700 ${quoted}`)
  }
  const mode = info.mode & 0o777
  const writable = [(mode & 0o020) !== 0 ? 'group' : '', (mode & 0o002) !== 0 ? 'world' : ''].filter(Boolean).join('- and ')
  if (writable !== '') throw dataDirError(dataDir, `is ${writable}-writable (mode ${mode.toString(8).padStart(3, '0')}), ${risk}`, `run chmod 700 ${quoted}`)
}

/** `path` as one word for a POSIX shell: quoted only when it needs to be. */
function shellQuote (path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`
}

/**
 * Loads the node's Ed25519 key from `<dataDir>/node.key`, creating it (mode 0600) on first
 * run. A key file that exists but cannot be read or decoded is an error, never replaced:
 * replacing it would silently change the node's identity and orphan its ledger feed.
 */
export async function loadOrCreateKey (dataDir: string): Promise<Ed25519PrivateKey> {
  await ensureDataDir(dataDir)
  const path = join(dataDir, KEY_FILE)
  let bytes: Uint8Array
  try {
    bytes = await readFile(path)
  } catch (err: any) {
    if (err?.code !== 'ENOENT') throw keyFileError(path, `cannot be read (${String(err?.code ?? err)})`)
    return await createKey(path)
  }
  let key: PrivateKey
  try {
    key = privateKeyFromProtobuf(bytes)
  } catch {
    throw keyFileError(path, 'is corrupt (not a libp2p private key)')
  }
  if (key.type !== 'Ed25519') throw keyFileError(path, `holds a ${key.type} key; idlegrid needs Ed25519`)
  const mode = (await stat(path)).mode & 0o777
  if ((mode & 0o077) !== 0) throw keyFileError(path, `is readable by others (mode ${mode.toString(8)}); run chmod 600 on it`)
  return key
}

async function createKey (path: string): Promise<Ed25519PrivateKey> {
  const key = await generateKeyPair('Ed25519')
  // 'wx' fails if another process created the file meanwhile: never overwrite a key.
  let handle
  try {
    handle = await open(path, 'wx', 0o600)
  } catch (err: any) {
    if (err?.code === 'EEXIST') throw keyFileError(path, 'was created by another process at the same time')
    throw keyFileError(path, `cannot be created (${String(err?.code ?? err)})`)
  }
  try {
    await handle.writeFile(privateKeyToProtobuf(key))
    await handle.sync()
  } finally {
    await handle.close()
  }
  return key
}
