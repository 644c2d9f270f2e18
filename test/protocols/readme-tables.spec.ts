/**
 * protocols/README.md is normative on its own: its tables carry every id, topic, prefix,
 * domain, bound and job variable. This spec parses those tables and asserts that the code
 * (ids.ts, codec.ts, the .proto limit options, the runners' job environment) holds exactly
 * the same values, in both directions: nothing in the code missing from the README, nothing
 * in the README the code does not have.
 */
import * as assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { ENVELOPE_OVERHEAD_BYTES, LIMITS, MAX_BYTES, MAX_CHUNK_BYTES, MAX_CLOCK_SKEW_MS, MAX_LIFETIME_MS } from '../../protocols/codec.js'
import { MAX_SERVE_FRAME_BYTES } from '../../src/serve/wire.js'
import { MAX_BID_REQUEST_BYTES } from '../../src/market/shared/bid-stream.js'
import { MAX_PROVIDERS_ANSWER_BYTES } from '../../src/capability/discovery/kad-providers.js'
import { CAPABILITY_KEY_PREFIX, DOMAIN, INDEX_KEY_PREFIX, JOB_SHARD_TOPICS, JOB_TOPIC_PREFIX, PROTOCOL, SIGNING_PREFIX, TOPIC, TOPIC_DOMAIN, TOPIC_MAX_BYTES } from '../../protocols/ids.js'
import { JobFrame } from '../../protocols/job.js'
import { SyncRequest } from '../../protocols/ledger.js'
import { toHex } from '../../src/common/index.js'
import { dockerRunArgs } from '../../src/exec/runners/docker.js'
import { processJobEnv } from '../../src/exec/runners/environment.js'
import { RUN_MARKER } from '../../src/exec/runners/proc-scan.js'
import type { RunSpec } from '../../src/exec/runners/types.js'

const PROTOCOLS = fileURLToPath(new URL('../../../protocols/', import.meta.url))
const README = readFileSync(join(PROTOCOLS, 'README.md'), 'utf8')

interface Table { header: string[], rows: string[][] }

/** Every pipe table of a markdown text (header row, separator, rows). */
function tables (md: string): Table[] {
  const out: Table[] = []
  const lines = md.split('\n')
  const cells = (line: string): string[] => line.trim().replace(/^\||\|$/g, '').split('|').map(c => c.trim())
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!lines[i].trim().startsWith('|') || !/^\|[\s|:-]+\|$/.test(lines[i + 1].trim())) continue
    const header = cells(lines[i])
    const rows: string[][] = []
    let j = i + 2
    for (; j < lines.length && lines[j].trim().startsWith('|'); j++) rows.push(cells(lines[j]))
    out.push({ header, rows })
    i = j - 1
  }
  return out
}

const ALL = tables(README)

/** The one table whose header starts with `first` (and, when given, whose second column is `second`). */
function table (first: string, second?: string): Table {
  const found = ALL.filter(t => t.header[0] === first && (second == null || t.header[1] === second))
  assert.equal(found.length, 1, `protocols/README.md must have exactly one table headed "${first}${second != null ? ` | ${second}` : ''}", found ${found.length}`)
  return found[0]
}

/** The first `code` span of a cell. */
function code (cell: string): string {
  const m = /`([^`]*)`/.exec(cell)
  assert.ok(m != null, `no code span in "${cell}"`)
  return m[1]
}

/** "1 MiB + 4 KiB", "256 B", "64 KiB" → bytes */
function parseSize (text: string): number {
  const unit: Record<string, number> = { B: 1, KiB: 1024, MiB: 1024 * 1024 }
  return text.split('+').reduce((sum, part) => {
    const m = /^\s*(\d+)\s*(B|KiB|MiB)\s*$/.exec(part)
    assert.ok(m != null, `not a size: "${text}"`)
    return sum + Number(m[1]) * unit[m[2]]
  }, 0)
}

const camel = (s: string): string => s.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase())
const snake = (s: string): string => s.replace(/[A-Z]/g, c => `_${c.toLowerCase()}`)
const sorted = <T>(xs: Iterable<T>): T[] => [...xs].sort()

/** `Message.Nested.field` → limit, from the `[(protons.options).limit = N]` options of every .proto file. */
function protoLimits (): Map<string, number> {
  const limits = new Map<string, number>()
  for (const file of readdirSync(PROTOCOLS).filter(f => f.endsWith('.proto'))) {
    const scope: string[] = []
    for (const raw of readFileSync(join(PROTOCOLS, file), 'utf8').split('\n')) {
      const line = raw.replace(/\/\/.*$/, '').trim()
      const open = /^(message|enum|oneof)\s+(\w+)\s*\{/.exec(line)
      if (open != null) { scope.push(open[1] === 'oneof' ? '' : open[2]); if (line.endsWith('}')) scope.pop(); continue }
      if (line.startsWith('}')) { scope.pop(); continue }
      const field = /^repeated\s+[\w.]+\s+(\w+)\s*=\s*\d+\s*\[\(protons\.options\)\.limit\s*=\s*(\d+)\]/.exec(line)
      if (field != null) limits.set([...scope.filter(s => s !== ''), field[1]].join('.'), Number(field[2]))
    }
  }
  return limits
}

/** Every leaf of codec.ts LIMITS as [snake_case field name, limit]. */
function codeLimitLeaves (obj: Record<string, unknown>, out: Array<[string, number]> = []): Array<[string, number]> {
  for (const [key, value] of Object.entries(obj)) {
    if (typeof value === 'number') out.push([snake(key.replace(/\$$/, '')), value])
    else codeLimitLeaves(value as Record<string, unknown>, out)
  }
  return out
}

describe('protocols/README.md tables equal the code', () => {
  it('the file table lists every .proto file', () => {
    const listed = table('file', 'messages').rows.map(r => code(r[0]))
    assert.deepEqual(sorted(listed), sorted(readdirSync(PROTOCOLS).filter(f => f.endsWith('.proto'))))
  })

  it('stream protocol ids', () => {
    assert.deepEqual(sorted(table('protocol id', 'purpose').rows.map(r => code(r[0]))), sorted(Object.values(PROTOCOL)))
  })

  it('gossip topics: domain, envelope bound and payload bound of each', () => {
    const rows = table('topic', 'domain').rows
    // the job shards share one row, written as their pattern (JOB_SHARD_TOPICS are its instances)
    const shardRow = `${JOB_TOPIC_PREFIX}<zone>/vram-<GiB>`
    assert.deepEqual(sorted(rows.map(r => code(r[0]))), sorted([...Object.values(TOPIC), shardRow]))
    for (const [topicCell, domainCell, , envelope, payload] of rows) {
      const topic = (code(topicCell) === shardRow ? JOB_SHARD_TOPICS[0] : code(topicCell)) as keyof typeof TOPIC_DOMAIN
      assert.equal(code(domainCell), TOPIC_DOMAIN[topic], `${topic} domain`)
      assert.equal(parseSize(envelope), TOPIC_MAX_BYTES[topic], `${topic} envelope bound`)
      assert.equal(parseSize(payload), MAX_BYTES[camel(TOPIC_DOMAIN[topic]) as keyof typeof MAX_BYTES], `${topic} payload bound`)
    }
  })

  it('signing domains', () => {
    assert.deepEqual(sorted(table('domain', 'message').rows.map(r => code(r[0]))), sorted(Object.values(DOMAIN)))
  })

  it('prefixes and DHT key schemes', () => {
    const rows = new Map(table('prefix', 'value').rows.map(r => [r[0], code(r[1])]))
    assert.deepEqual(Object.fromEntries(rows), { 'signing prefix': SIGNING_PREFIX, 'capability key prefix': CAPABILITY_KEY_PREFIX, 'index key prefix': INDEX_KEY_PREFIX })
  })

  it('message byte bounds: every MAX_BYTES entry, with its exact byte count', () => {
    const rows = table('message', 'name in code (`MAX_BYTES.`)').rows
    const readme = Object.fromEntries(rows.map(r => [code(r[1]), Number(r[3])]))
    assert.deepEqual(readme, { ...MAX_BYTES })
    for (const r of rows) assert.equal(parseSize(r[2]), Number(r[3]), `${r[1]}: "${r[2]}" is not ${r[3]} bytes`)
  })

  it('other size bounds', () => {
    const t = ALL.filter(t => t.header[0] === 'bound' && t.header[2] === 'bytes')
    assert.equal(t.length, 1)
    const readme = Object.fromEntries(t[0].rows.map(r => [code(r[1]), Number(r[2])]))
    assert.deepEqual(readme, {
      ENVELOPE_OVERHEAD_BYTES,
      MAX_CHUNK_BYTES,
      MAX_SERVE_FRAME_BYTES,
      MAX_BID_REQUEST_BYTES,
      MAX_PROVIDERS_ANSWER_BYTES
    })
  })

  it('time bounds', () => {
    const t = ALL.filter(t => t.header[0] === 'bound' && t.header[2] === 'ms')
    assert.equal(t.length, 1)
    const readme = Object.fromEntries(t[0].rows.map(r => [code(r[1]), Number(r[2])]))
    const inCode: Record<string, number> = { MAX_CLOCK_SKEW_MS }
    for (const [k, v] of Object.entries(MAX_LIFETIME_MS)) inCode[`MAX_LIFETIME_MS.${k}`] = v
    assert.deepEqual(readme, inCode)
  })

  it('repeated-field limits: the README table equals the .proto options, and codec.ts LIMITS agrees', () => {
    const readme = new Map(table('field', 'limit').rows.map(r => [code(r[0]), Number(/^\d+/.exec(r[1])?.[0])]))
    const proto = protoLimits()
    assert.ok(proto.size > 10, `found ${proto.size} limit options in the .proto files`)
    assert.deepEqual(Object.fromEntries(readme), Object.fromEntries(proto))
    for (const [leaf, limit] of codeLimitLeaves(LIMITS)) {
      const rows = [...readme].filter(([field]) => field.endsWith(`.${leaf}`))
      assert.ok(rows.some(([, l]) => l === limit), `codec.ts LIMITS has ${leaf} = ${limit}; the README has ${rows.map(([f, l]) => `${f} = ${l}`).join(', ') || 'no such field'}`)
    }
  })

  it('job environment: exactly the variables the runners set', async () => {
    const spec: RunSpec = { jobId: 'ab'.repeat(16), workDir: '/w', command: ['true'], image: 'busybox', env: {}, timeoutMs: 1000, graceMs: 10, gpu: { index: 0, uuid: 'GPU-1', simulated: false } }
    const processVars = [...Object.keys(processJobEnv(spec)), RUN_MARKER]
    const args = dockerRunArgs(spec, 'n', { allowedImages: ['*'] })
    const dockerVars = args.flatMap((a, i) => args[i - 1] === '--env' ? [a.split('=')[0]] : [])
    const readme = table('variable', 'value').rows.map(r => code(r[0])).filter(n => /^[A-Z_][A-Z0-9_]*$/.test(n))
    assert.deepEqual(sorted(readme), sorted(new Set([...processVars, ...dockerVars])))
    assert.equal(args[args.indexOf('--workdir') + 1], '/job', 'the README says the docker work dir is /job')
  })

  it('job stream Error codes', () => {
    const readme = Object.fromEntries(table('`Error.Code`', 'sent when').rows.map(r => { const m = /^`(\w+)` \((\d+)\)$/.exec(r[0]); assert.ok(m != null, r[0]); return [m[1], Number(m[2])] }))
    // the generated codec keeps the numbers private: read each off its encoding (tag 08, varint)
    const number = (name: string): number => JobFrame.Error.encode({ code: name as JobFrame.Error.Code, message: '' })[1]
    const inCode = Object.fromEntries(Object.keys(JobFrame.Error.Code).filter(k => k !== 'CODE_UNSPECIFIED' && typeof (JobFrame.Error.Code as any)[k] === 'string').map(k => [k, number(k)]))
    assert.deepEqual(readme, inCode)
  })

  it('the signer encoding and its hex prefix are those of a real Ed25519 peer id', async () => {
    const bytes = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toMultihash().bytes
    assert.equal(bytes.length, 38)
    assert.ok(toHex(bytes).startsWith('002408011220'))
    assert.ok(README.includes('**`002408011220`**'))
  })

  it('empty sub-messages are sent present, with the bytes the README gives', () => {
    assert.equal(toHex(JobFrame.encode({ inputEnd: {} })), '1a00')
    assert.equal(toHex(SyncRequest.encode({ heads: { ownAuthor: new Uint8Array(0), ownSeq: 0n, ownHash: new Uint8Array(0), afterAuthor: new Uint8Array(0), limit: 0 } })), '0a00')
    assert.ok(README.includes('bytes `1a 00`') && README.includes('bytes `0a 00`'))
  })
})
