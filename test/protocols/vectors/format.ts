/**
 * The conformance vector file format (protocols/README.md, "Conformance vectors"). Kept free
 * of project imports: the independent checker reads the same shapes.
 */

/** Which validator a vector is fed to, with what it needs beside the bytes. */
export type VectorCheck =
  /** a SignedEnvelope opened for `domain` with an encoded-size bound */
  | { kind: 'envelope', domain: string, maxBytes: number }
  /**
   * a gossip message on `topic` as the topic validator sees it; `from` is the gossip sender
   * (default: the envelope's signer)
   */
  | { kind: 'gossip', topic: string, from?: string }
  /** a DHT value under `key` (UTF-8 text of the record key) */
  | { kind: 'capability-record', key: string }
  /** one job stream frame; attestation and receipt frames are also opened against `expect` */
  | { kind: 'job-frame', expect?: RecordExpectation }
  /** ledger entries ingested in file order into one empty store */
  | { kind: 'ledger-feed' }
  /** a fraud-proof envelope carried by `builder`'s entry dated `entryTime` */
  | { kind: 'fraud-proof', builder: string, entryTime: number }
  | { kind: 'sync-request' }
  | { kind: 'sync-response' }
  /** an unsigned message read whole from a stream frame (a BidAck), bound `maxBytes` */
  | { kind: 'message', maxBytes: number }
  /** a BidsAuditResponse read by the winner of the award `award` (its envelope, hex) to learn its price */
  | { kind: 'bids-audit', award: string }

export interface RecordExpectation {
  provider: string
  renter: string
  jobId: string
  awardHash?: string
  inputDigest?: string
  attestationHash?: string
}

/**
 * Where a rejection is decided: the first five need nothing but the bytes, the protobuf
 * schema and Ed25519 (the independent checker must agree on them); `rule` needs the
 * message's own rules (times, chains, replay, field checks).
 */
export type VectorStage = 'size' | 'decode' | 'domain' | 'signer' | 'signature' | 'rule'

export interface Vector {
  name: string
  /** protobuf message type of `hex` */
  type: string
  /** for an envelope: the message type of its payload */
  payloadType?: string
  check: VectorCheck
  hex: string
  /**
   * the decoded meaning (normalised: bytes as hex, 64-bit integers as decimal strings, enums by
   * name); null when it does not decode
   */
  decoded: unknown
  verdict: 'accept' | 'reject'
  /** the rule or error code that decides the verdict ("ok" when accepted) */
  reason: string
  /** where a rejection is decided (absent when accepted) */
  stage?: VectorStage
  /** the gossipsub action for gossip vectors: a stale or replayed message is ignored, not scored down */
  gossip?: 'accept' | 'ignore' | 'reject'
  note?: string
}

export interface VectorKey {
  /** 32-byte Ed25519 seed, hex */
  seed?: string
  /** 32-byte public key, hex */
  publicKey: string
  /** peer id, base58btc */
  peerId: string
}

export interface VectorFile {
  format: 'idlegrid-vectors/1'
  description: string
  /** the receiver's clock for every vector in the file, unix ms */
  now: number
  signingPrefix: string
  keys: Record<string, VectorKey>
  vectors: Vector[]
}

export const VECTOR_FORMAT = 'idlegrid-vectors/1'

export function hex (bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
}

export function unhex (text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'hex'))
}

/**
 * The decoded meaning of a protons-decoded message: bytes as hex, bigints as decimal strings,
 * absent fields dropped; enums are already names.
 */
export function meaning (value: unknown): unknown {
  if (value instanceof Uint8Array) return hex(value)
  if (typeof value === 'bigint') return value.toString()
  if (Array.isArray(value)) return value.map(meaning)
  if (value != null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined && v !== null) out[k] = meaning(v)
    }
    return out
  }
  return value
}
