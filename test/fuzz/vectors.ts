/**
 * Extra seeds from the conformance vectors in protocols/vectors/*.json, when that folder exists
 * (issue 14 adds it). The vector format is read loosely: any object naming a message (by a
 * `message`, `type` or `name` field, or the file's name) with hex bytes in a `hex`, `bytes`,
 * `encoded`, `wire` or `payload` field gives that message a seed; an `envelope` field gives a
 * SignedEnvelope seed. Anything else in the files is ignored.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const MESSAGES = ['SignedEnvelope', 'Heartbeat', 'CapabilityRecord', 'JobRequest', 'Bid', 'Award', 'AcceptRequest', 'AcceptResponse', 'ExplainRequest', 'Decline',
  'JobFrame', 'Attestation', 'Receipt', 'LedgerEntry', 'HeartbeatSummary', 'FraudProof', 'SyncRequest', 'SyncResponse']
const BYTE_KEYS = ['hex', 'bytes', 'encoded', 'wire', 'payload']
const HEX = /^(?:[0-9a-f]{2})+$/i
const norm = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '')
const byNorm = new Map(MESSAGES.map(m => [norm(m), m]))

/** The repository root, from dist/test/fuzz or test/fuzz. */
export function repoRoot (): string {
  const here = fileURLToPath(new URL('.', import.meta.url))
  return here.includes(`${'/dist/'}`) ? join(here, '..', '..', '..') : join(here, '..', '..')
}

function messageOf (obj: Record<string, unknown>, fallback: string | undefined): string | undefined {
  for (const key of ['message', 'type', 'name']) {
    const v = obj[key]
    if (typeof v === 'string' && byNorm.has(norm(v))) return byNorm.get(norm(v))
  }
  return fallback
}

function walk (value: unknown, fallback: string | undefined, out: Record<string, Uint8Array[]>, depth = 0): void {
  if (depth > 16 || value == null || typeof value !== 'object') return
  if (Array.isArray(value)) {
    for (const item of value) walk(item, fallback, out, depth + 1)
    return
  }
  const obj = value as Record<string, unknown>
  const message = messageOf(obj, fallback)
  for (const [key, v] of Object.entries(obj)) {
    if (typeof v === 'string' && HEX.test(v)) {
      const target = key === 'envelope' ? 'SignedEnvelope' : BYTE_KEYS.includes(key) ? message : undefined
      if (target != null) (out[target] ??= []).push(new Uint8Array(Buffer.from(v, 'hex')))
    } else if (typeof v === 'object') {
      walk(v, byNorm.get(norm(key)) ?? message, out, depth + 1)
    }
  }
}

/** Seeds by message name from protocols/vectors/*.json; empty when there are none. */
export function loadVectorSeeds (dir = join(repoRoot(), 'protocols', 'vectors')): Record<string, Uint8Array[]> {
  const out: Record<string, Uint8Array[]> = {}
  if (!existsSync(dir)) return out
  for (const file of readdirSync(dir).filter(f => f.endsWith('.json'))) {
    try {
      walk(JSON.parse(readFileSync(join(dir, file), 'utf8')), byNorm.get(norm(basename(file, '.json'))), out)
    } catch {
      // a vector file we cannot read adds no seeds; the fixtures' own seeds remain
    }
  }
  return out
}
