/**
 * Feeds vectors to this implementation's real validators and decoders, with the file's
 * fixed `now`: the gossip router (fake pubsub, real validators), the DHT record validator,
 * job-frame decoding, a real LevelDB ledger store, the fraud-proof verifier, the sync server.
 */

import { generateKeyPairFromSeed } from '@libp2p/crypto/keys'
import { defaultLogger } from '@libp2p/logger'
import { peerIdFromMultihash, peerIdFromPrivateKey, peerIdFromString } from '@libp2p/peer-id'
import * as Digest from 'multiformats/hashes/digest'
import { decodeBounded, LIMITS, MAX_BYTES, WireDecodeError } from '../../../protocols/codec.js'
import { SignedEnvelope } from '../../../protocols/envelope.js'
import { JOB_SHARD_TOPICS, type TopicName } from '../../../protocols/ids.js'
import { JobFrame } from '../../../protocols/job.js'
import { SyncRequest, SyncResponse } from '../../../protocols/ledger.js'
import { openCapabilityRecord } from '../../../src/capability/record/record.js'
import { isRecordRejection } from '../../../src/capability/errors.js'
import { frameKind } from '../../../src/exec/shared/job-stream.js'
import { isRecordError, isStreamError } from '../../../src/exec/errors.js'
import { openAttestation, openReceipt } from '../../../src/exec/shared/records.js'
import { isEnvelopeError, openEnvelope } from '../../../src/identity/index.js'
import { isCoded } from '../../../src/common/index.js'
import { isEntryError, LedgerError } from '../../../src/ledger/errors.js'
import { verifyFraudProof } from '../../../src/ledger/entries/fraud.js'
import { LedgerGossip } from '../../../src/ledger/sync/gossip.js'
import { LedgerIngest } from '../../../src/ledger/ingest/ingest.js'
import { SyncServer } from '../../../src/ledger/sync/server.js'
import { validateJobRequest } from '../../../src/market/shared/validation.js'
import { BidAck } from '../../../protocols/market.js'
import { openAward } from '../../../src/market/shared/award-check.js'
import { verifyBidsAudit } from '../../../src/market/shared/bids-audit.js'
import { clearingSample } from '../../../src/market/provider/clearing-check.js'
import { gossipRouter, type GossipRouter } from '../../../src/node/gossip.js'
import { heartbeatService } from '../../../src/node/presence/heartbeat.js'
import { tempDir } from '../../utils/index.js'
import { unhex, type Vector, type VectorFile } from './format.js'
import type { SyncClient } from '../../../src/ledger/sync/client.js'
import type { Message, PeerId } from '@libp2p/interface'

export interface Judgement { verdict: 'accept' | 'reject', reason: string, gossip?: 'accept' | 'ignore' | 'reject' }

const ok: Judgement = { verdict: 'accept', reason: 'ok' }
const no = (reason: string): Judgement => ({ verdict: 'reject', reason })

/** Runs one file's vectors in order against one fresh node's validators; returns each judgement. */
/** Unsigned messages a vector of kind 'message' may hold. */
const UNSIGNED_MESSAGES: Record<string, Parameters<typeof decodeBounded>[0]> = { BidAck }

export async function judgeFile (file: VectorFile): Promise<Judgement[]> {
  const dir = await tempDir('idlegrid-vectors-')
  const node = await Node.start(file, dir.path)
  try {
    const out: Judgement[] = []
    for (const vector of file.vectors) out.push(await node.judge(vector))
    return out
  } finally {
    await node.stop()
    await dir.cleanup()
  }
}

class Node {
  private constructor (
    private readonly now: number,
    private readonly router: GossipRouter,
    private readonly pubsub: FakePubSub,
    private readonly ledger: LedgerIngest,
    private readonly self: PeerId
  ) {}

  static async start (file: VectorFile, path: string): Promise<Node> {
    const key = await generateKeyPairFromSeed('Ed25519', new Uint8Array(32).fill(7))
    const peerId = peerIdFromPrivateKey(key)
    const now = (): number => file.now
    const store = await LedgerIngest.open(path, { privateKey: key, peerId, now, syncWrites: false })
    const pubsub = new FakePubSub()
    const logger = defaultLogger()
    const router = gossipRouter({ now })({ pubsub: pubsub as any, logger })
    ;(router as any).start()
    // the real payload validators, as the node installs them, with the file's clock
    // the heartbeat topic is legacy and off by default; a node that opts in judges it by these rules (the stream's too)
    const streamSide: any = {
      registrar: { handle: async () => {}, unhandle: async () => {} },
      connectionManager: { getConnections: () => [] },
      events: new EventTarget()
    }
    const heartbeats = heartbeatService({ role: 'bootstrap', intervalMs: 60_000, privateKey: key, now, gossip: true })({ peerId, pubsub: pubsub as any, gossip: router, logger, ...streamSide })
    await (heartbeats as any).start()
    for (const shard of JOB_SHARD_TOPICS) router.setValidator(shard, (e) => validateJobRequest(e, shard, file.now))
    new LedgerGossip({ pubsub: () => pubsub as any, gossip: () => router, ledger: () => store, signal: new AbortController().signal, onBehind: () => {}, log: logger.forComponent('vectors') }).start()
    return new Node(file.now, router, pubsub, store, peerId)
  }

  async stop (): Promise<void> {
    await this.ledger.close()
  }

  async judge (vector: Vector): Promise<Judgement> {
    const bytes = unhex(vector.hex)
    const check = vector.check
    switch (check.kind) {
      case 'envelope':
        return catching(() => { openEnvelope(bytes, { domain: check.domain, maxBytes: check.maxBytes }); return ok })
      case 'gossip':
        return await this.gossip(check.topic as TopicName, bytes, check.from)
      case 'capability-record':
        // what the kad-dht validator runs (dht-rules.ts), with the file's clock
        return catching(() => {
          openCapabilityRecord(bytes, { key: new TextEncoder().encode(check.key), now: this.now })
          return ok
        })
      case 'job-frame':
        return catching(() => {
          const frame = decodeBounded(JobFrame, bytes, 'job frame', MAX_BYTES.jobFrame, LIMITS.jobFrame)
          const kind = frameKind(frame)
          const e = check.expect
          if (e != null && kind === 'attestation') openAttestation(frame.attestation!, { provider: peerIdFromString(e.provider), renter: peerIdFromString(e.renter), jobId: unhex(e.jobId), awardHash: unhex(e.awardHash ?? ''), inputDigest: unhex(e.inputDigest ?? '') })
          if (e != null && kind === 'receipt') openReceipt(frame.receipt!, { provider: peerIdFromString(e.provider), renter: peerIdFromString(e.renter), jobId: unhex(e.jobId), attestationHash: unhex(e.attestationHash ?? '') })
          return ok
        })
      case 'ledger-feed': {
        const [outcome] = await this.ledger.ingest([bytes])
        if (outcome.status === 'added') return ok
        return no(outcome.status === 'rejected' ? outcome.error.code : outcome.status)
      }
      case 'fraud-proof':
        return await catchingAsync(async () => {
          await verifyFraudProof(bytes, { builder: check.builder, entryTime: check.entryTime })
          return ok
        })
      case 'sync-request':
        return await catchingAsync(async () => {
          const request = decodeBounded(SyncRequest, bytes, 'sync request', MAX_BYTES.syncRequest)
          await new SyncServer(() => this.ledger.store, { considerHint: () => {} } as unknown as SyncClient).answer(
            request,
            this.self
          )
          return ok
        })
      case 'sync-response':
        return catching(() => { decodeBounded(SyncResponse, bytes, 'sync response', MAX_BYTES.syncResponse, LIMITS.syncResponse); return ok })
      case 'bids-audit':
        // what the winner of a second-price award does with the renter's answer
        // (market/provider/award-prices.ts learnFromAudit)
        return catching(() => {
          const award = openAward(unhex(check.award))
          const audit = verifyBidsAudit(award, bytes, this.now)
          if (!audit.ok || audit.job == null) return no('audit-does-not-hold')
          clearingSample(award, audit.job, audit.bids, { priceAudited: true })
          return ok
        })
      case 'message': {
        // how the bid stream reads its answer (bid-stream.ts): bounded, then decoded
        const codec = UNSIGNED_MESSAGES[vector.type]
        if (codec == null) throw new Error(`no codec for ${vector.type}`)
        return catching(() => { decodeBounded(codec, bytes, vector.type, check.maxBytes); return ok })
      }
    }
  }

  private async gossip (topic: TopicName, data: Uint8Array, fromText?: string): Promise<Judgement> {
    const from = fromText != null ? peerIdFromString(fromText) : signerOf(data, this.self)
    const before = this.router.stats()[topic] ?? {}
    const msg: Message = { type: 'unsigned', topic, data }
    const result = await this.pubsub.topicValidators.get(topic)!(from, msg)
    const after = this.router.stats()[topic] ?? {}
    const key = Object.keys(after).find(k => after[k] !== (before[k] ?? 0))
    if (key == null) throw new Error(`the router counted no verdict for ${topic}`)
    if (result === 'accept') this.pubsub.dispatchEvent(new CustomEvent('message', { detail: msg }))
    const [action, ...reason] = key.split(':')
    return action === 'accept' ? { ...ok, gossip: 'accept' } : { verdict: 'reject', reason: reason.join(':'), gossip: action as 'ignore' | 'reject' }
  }
}

/**
 * The gossip sender when the vector names none: the envelope's signer (or, when that does not
 * parse, a bystander: the router refuses the envelope first).
 */
function signerOf (data: Uint8Array, bystander: PeerId): PeerId {
  try {
    return peerIdFromMultihash(Digest.decode(SignedEnvelope.decode(data).signer))
  } catch {
    return bystander
  }
}

/** What a pubsub offers the router: validators by topic and 'message' events. */
class FakePubSub extends EventTarget {
  readonly topicValidators = new Map<string, (from: PeerId, msg: Message) => Promise<string>>()
  subscribe (): void {}
}

function reasonOf (err: unknown): string | undefined {
  if (isEnvelopeError(err)) return err.reason
  if (isRecordRejection(err)) return err.reason
  if (err instanceof WireDecodeError || isRecordError(err)) return err.reason
  if (isStreamError(err)) return err.wireCode
  if (isEntryError(err) || isCoded(err, LedgerError, 'ERR_LEDGER_SYNC')) return err.code
  return undefined
}

function catching (fn: () => Judgement): Judgement {
  try {
    return fn()
  } catch (err) {
    const reason = reasonOf(err)
    if (reason == null) throw err
    return no(reason)
  }
}

async function catchingAsync (fn: () => Promise<Judgement>): Promise<Judgement> {
  try {
    return await fn()
  } catch (err) {
    const reason = reasonOf(err)
    if (reason == null) throw err
    return no(reason)
  }
}
