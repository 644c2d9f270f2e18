/**
 * The dashboard's token: 32 random bytes (hex) in <dataDir>/dashboard.token, owner-only,
 * made on first use. A browser's sign-in page sends it once in a header to /session, which
 * sets an HttpOnly, SameSite=Strict cookie; scripts send `Authorization: Bearer …`. It never
 * goes in a URL (address bar, history, logs). Compared
 * in constant time (digests of equal length), so timing tells nothing of the token.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ObserveError } from './errors.js'
import type { IncomingMessage } from 'node:http'

export const TOKEN_FILE = 'dashboard.token'
export const TOKEN_COOKIE = 'idlegrid_dashboard'
const TOKEN_TEXT = /^[0-9a-f]{64}$/

/** The data dir's token, made (0600) when there is none. */
export async function loadDashboardToken (dataDir: string): Promise<string> {
  const path = join(dataDir, TOKEN_FILE)
  try {
    await writeFile(path, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' })
  } catch (err: any) {
    if (err?.code !== 'EEXIST') throw err
  }
  const token = (await readFile(path, 'utf8')).trim()
  if (!TOKEN_TEXT.test(token)) throw new ObserveError('ERR_DASHBOARD_TOKEN', `${path} does not hold a dashboard token (64 hex characters); delete it and a new one is made`)
  return token
}

/** Whether `given` is `token`, in time that does not depend on where they differ. */
export function tokenMatches (given: string | undefined, token: string): boolean {
  if (given == null) return false
  const a = createHash('sha256').update(given).digest()
  const b = createHash('sha256').update(token).digest()
  return timingSafeEqual(a, b)
}

/** The token a request carries: its bearer header, else its cookie. */
export function requestToken (req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization
  if (typeof auth === 'string' && auth.startsWith('Bearer ')) return auth.slice(7).trim()
  const cookies = req.headers.cookie
  if (typeof cookies !== 'string') return undefined
  for (const part of cookies.split(';')) {
    const at = part.indexOf('=')
    if (at > 0 && part.slice(0, at).trim() === TOKEN_COOKIE) return part.slice(at + 1).trim()
  }
  return undefined
}

export function tokenCookie (token: string): string {
  return `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`
}
