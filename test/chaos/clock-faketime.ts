/**
 * A node process with a wrong clock: libfaketime (Debian package `faketime`) preloaded into the
 * `idlegrid` process moves its wall clock (Date.now, new Date) by a fixed offset. The monotonic
 * clock is left alone (FAKETIME_DONT_FAKE_MONOTONIC): Node's timers and libuv run on it, and a
 * faked one only slows them down. FAKETIME_NO_CACHE makes every read apply the offset.
 */
import { existsSync } from 'node:fs'

const LIBRARY_PATHS = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1'
]

/** The libfaketime shared library, or undefined when the package is not installed. */
export function faketimeLibrary (): string | undefined {
  return LIBRARY_PATHS.find(p => existsSync(p))
}

/** The environment that runs a process `offsetMs` ahead of (positive) or behind (negative) the real clock. */
export function skewedClockEnv (offsetMs: number): NodeJS.ProcessEnv {
  const library = faketimeLibrary()
  if (library == null) throw new Error('libfaketime is not installed (apt-get install faketime)')
  const seconds = Math.round(offsetMs / 1000)
  return {
    LD_PRELOAD: library,
    FAKETIME: `${seconds >= 0 ? '+' : ''}${seconds}s`,
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
    FAKETIME_NO_CACHE: '1'
  }
}
