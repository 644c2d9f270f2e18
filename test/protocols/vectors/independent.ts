/**
 * A second implementation of the wire rules that vectors can be checked against without any
 * project code: protobufjs parses the .proto files, node:crypto verifies Ed25519, and the
 * bounds and domains are transcribed from protocols/README.md. It decides only what needs
 * nothing but bytes, schema and signatures (VectorStage 'size' … 'signature').
 */

import { createPublicKey, verify } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import protobuf from 'protobufjs'
import { hex, unhex, type Vector, type VectorStage } from './format.js'
import { parseMerged } from './independent-parse.js'

/** protocols/README.md §2 and §8, as a stranger reads them. */
const PREFIX = 'idlegrid/v1/'
const TOPICS: Record<string, { domain: string, maxBytes: number }> = {
  '/idlegrid/3/jobs/eu/vram-24': { domain: 'job-request', maxBytes: 16 * 1024 },
  '/idlegrid/3/jobs/us/vram-80': { domain: 'job-request', maxBytes: 16 * 1024 },
  '/idlegrid/5/ledger': { domain: 'ledger-entry', maxBytes: 64 * 1024 },
  '/idlegrid/2/heartbeats': { domain: 'heartbeat', maxBytes: 2 * 1024 }
}
const MAX_BYTES: Record<string, number> = { SyncRequest: 4 * 1024, SyncResponse: 4 * 1024 * 1024, JobFrame: 1024 * 1024 + 4 * 1024, capability: 8 * 1024 + 256, 'ledger-entry': 32 * 1024 + 256, 'fraud-proof': 29 * 1024 + 256 }
/** repeated-field limits (§8) that the vectors reach */
const LIMITS: Record<string, number> = { 'SyncResponse.Entries.entries': 1024, 'SyncRequest.Ranges.ranges': 64, 'SyncResponse.Ranges.ranges': 64, 'SyncResponse.Heads.heads': 10_000, 'CapabilityRecord.acceptedTiers': 3 }
/** messages with a oneof of which exactly one member must be set */
const ONE_OF_REQUIRED = new Set(['JobFrame', 'SyncRequest'])

const L = 2n ** 252n + 27742317777372353535851937790883648493n
const P = 2n ** 255n - 19n
/** the canonical encodings of the eight small-order points (RFC 8032 strict verification refuses them as keys) */
const SMALL_ORDER = new Set([
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa'
])

export class Refused extends Error {
  constructor (readonly stage: VectorStage, message: string) { super(message) }
}

export interface IndependentResult { stage?: VectorStage, why?: string, decoded?: unknown }

export function loadSchema (protocolsDir: string): protobuf.Root {
  const root = new protobuf.Root()
  for (const name of readdirSync(protocolsDir).filter(f => f.endsWith('.proto')).sort()) {
    protobuf.parse(readFileSync(join(protocolsDir, name), 'utf8'), root, { keepCase: false })
  }
  protobuf.parse('syntax = "proto3"; message PublicKey { int32 type = 1; bytes data = 2; }', root)
  root.resolveAll()
  return root
}

export function checkIndependently (root: protobuf.Root, vector: Vector): IndependentResult {
  try {
    return { decoded: judge(root, vector) }
  } catch (err) {
    if (err instanceof Refused) return { stage: err.stage, why: err.message }
    throw err
  }
}

function judge (root: protobuf.Root, v: Vector): unknown {
  const bytes = unhex(v.hex)
  const c = v.check
  const domain = c.kind === 'envelope' ? c.domain : c.kind === 'gossip' ? TOPICS[c.topic].domain : c.kind === 'capability-record' ? 'capability' : c.kind === 'ledger-feed' ? 'ledger-entry' : c.kind === 'fraud-proof' ? 'fraud-proof' : undefined
  const bound = c.kind === 'envelope' || c.kind === 'message' ? c.maxBytes : c.kind === 'gossip' ? TOPICS[c.topic].maxBytes : MAX_BYTES[domain ?? v.type]
  if (bound != null && bytes.length > bound) throw new Refused('size', `${bytes.length} > ${bound} bytes`)
  if (v.type !== 'SignedEnvelope') {
    const message = decode(root, v.type, bytes)
    if (v.type === 'JobFrame' && c.kind === 'job-frame' && c.expect != null) {
      const m = message as unknown as Record<string, Uint8Array> & { frame?: string }
      if (m.frame === 'attestation') openEnvelope(root, m.attestation, 'attestation', 'Attestation', c.expect.provider)
      if (m.frame === 'receipt') openEnvelope(root, m.receipt, 'receipt', 'Receipt', c.expect.renter)
    }
    return meaningOf(root.lookupType(v.type), message)
  }
  const expected = c.kind === 'capability-record' ? c.key.replace('/idlegrid/cap/', '') : c.kind === 'fraud-proof' ? c.builder : undefined
  return openEnvelope(root, bytes, domain!, v.payloadType!, expected)
}

/** §3: decode, domain, signer (Ed25519 peer id, = `expected` when given), strict signature, then the payload. */
function openEnvelope (
  root: protobuf.Root,
  bytes: Uint8Array,
  domain: string,
  payloadType: string,
  expected?: string
): unknown {
  const type = root.lookupType('SignedEnvelope')
  const env = decode(root, 'SignedEnvelope', bytes) as unknown as { domain: string, signer: Uint8Array, payload: Uint8Array, signature: Uint8Array }
  if (env.domain !== domain) throw new Refused('domain', `domain "${env.domain}", expected "${domain}"`)
  const publicKey = ed25519Key(root, env.signer)
  if (expected != null && base58(env.signer) !== expected) throw new Refused('signer', `signed by ${base58(env.signer)}, expected ${expected}`)
  const input = Buffer.concat([Buffer.from(PREFIX + env.domain), Buffer.of(0), env.payload])
  strictVerify(publicKey, input, env.signature)
  const meaning = meaningOf(type, env) as Record<string, unknown>
  return { ...meaning, payload: meaningOf(root.lookupType(payloadType), decode(root, payloadType, env.payload)) }
}

/** The signer field: identity multihash (0x00, length) of a protobuf PublicKey{type = 1 (Ed25519), data = 32 bytes}. */
function ed25519Key (root: protobuf.Root, signer: Uint8Array): Uint8Array {
  if (signer.length < 2 || signer[0] !== 0x00 || signer[1] !== signer.length - 2) throw new Refused('signer', 'signer is not an identity multihash')
  let key: { type: number, data: Uint8Array }
  try {
    key = root.lookupType('PublicKey').decode(signer.subarray(2)) as unknown as { type: number, data: Uint8Array }
  } catch {
    throw new Refused('signer', 'signer holds no public key')
  }
  if (key.type !== 1 || key.data.length !== 32) throw new Refused('signer', `key type ${key.type} is not Ed25519`)
  return key.data
}

/** RFC 8032 strict: 64-byte signature, S < L, canonical R and A, A not of small order; then node:crypto. */
function strictVerify (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): void {
  if (signature.length !== 64) throw new Refused('signature', `signature of ${signature.length} bytes`)
  if (le(signature.subarray(32)) >= L) throw new Refused('signature', 'S >= L')
  for (const point of [publicKey, signature.subarray(0, 32)]) {
    const y = le(point) & ((1n << 255n) - 1n)
    if (y >= P || ((point[31] & 0x80) !== 0 && (y === 1n || y === P - 1n))) throw new Refused('signature', 'non-canonical point encoding')
  }
  if (SMALL_ORDER.has(hex(publicKey))) throw new Refused('signature', 'small-order public key')
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' })
  if (!verify(null, message, key, signature)) throw new Refused('signature', 'signature does not verify')
}

function decode (root: protobuf.Root, typeName: string, bytes: Uint8Array): protobuf.Message {
  const type = root.lookupType(typeName)
  let message: protobuf.Message
  try {
    // not type.decode: protobufjs neither merges repeated message fields nor checks 64-bit lengths
    message = parseMerged(type, bytes)
  } catch (err) {
    throw new Refused('decode', `${typeName}: ${(err as Error).message}`)
  }
  checkDecoded(type, message)
  return message
}

/**
 * What a protobuf parser alone does not enforce: closed enums, repeated limits, a required oneof
 * member (nested too).
 */
function checkDecoded (type: protobuf.Type, message: any): void {
  for (const field of type.fieldsArray) {
    if (!isPresent(type, message, field)) continue
    const values: unknown[] = field.repeated ? message[field.name] : [message[field.name]]
    const limit = LIMITS[`${type.fullName.slice(1)}.${field.name}`]
    if (limit != null && values.length > limit) throw new Refused('decode', `${type.name}.${field.name}: ${values.length} > ${limit}`)
    if (field.resolvedType instanceof protobuf.Enum) {
      const e = field.resolvedType
      for (const value of values) if (e.valuesById[value as number] == null) throw new Refused('decode', `${e.name} ${String(value)} is not a known value`)
    } else if (field.resolvedType instanceof protobuf.Type) {
      for (const value of values) checkDecoded(field.resolvedType, value)
    }
  }
  if (ONE_OF_REQUIRED.has(type.name) && type.oneofsArray.some(o => message[o.name] == null)) throw new Refused('decode', `${type.name} sets no member of its oneof`)
}

/** Present: a oneof member only when it is the one the oneof names (the last seen wins), messages when set. */
function isPresent (type: protobuf.Type, message: any, field: protobuf.Field): boolean {
  if (field.partOf != null) return message[field.partOf.name] === field.name
  if (field.resolvedType instanceof protobuf.Type && !field.repeated) return message[field.name] != null
  return true
}

/**
 * The decoded meaning (format.ts): bytes as hex, 64-bit integers as decimal strings, enums by name,
 * defaults written out.
 */
function meaningOf (type: protobuf.Type, message: any): unknown {
  const out: Record<string, unknown> = {}
  for (const field of type.fieldsArray) {
    if (!isPresent(type, message, field)) continue
    const one = (value: any): unknown => {
      if (field.resolvedType instanceof protobuf.Enum) return field.resolvedType.valuesById[value]
      if (field.resolvedType instanceof protobuf.Type) return meaningOf(field.resolvedType, value)
      // an absent bytes field reads as protobufjs's default, an empty array
      if (field.type === 'bytes') return hex(Uint8Array.from(value as ArrayLike<number>))
      if (['uint64', 'int64', 'sint64', 'fixed64', 'sfixed64'].includes(field.type)) return String(value)
      return value
    }
    out[field.name] = field.repeated ? (message[field.name] as unknown[]).map(one) : one(message[field.name])
  }
  return out
}

function le (bytes: Uint8Array): bigint {
  let n = 0n
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i])
  return n
}

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'

/** base58btc, as peer ids are written */
function base58 (bytes: Uint8Array): string {
  let n = BigInt('0x' + (hex(bytes) || '0'))
  let out = ''
  while (n > 0n) { out = ALPHABET[Number(n % 58n)] + out; n /= 58n }
  for (const b of bytes) { if (b !== 0) break; out = '1' + out }
  return out
}
