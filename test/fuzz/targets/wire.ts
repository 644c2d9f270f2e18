/**
 * Every protobuf message through its bounded decoder (protocols/codec.ts decodeBounded with
 * the message's byte bound and repeated-field limits), signed envelopes as any receiver opens
 * them, and the market and execution readers that take envelope bytes from a stream
 * (accept responses, declines, attestations, receipts). Inputs are mutated raw bytes: past
 * the envelope layer a mutation almost always breaks the signature, which signed.ts covers.
 */
import { Uint8ArrayList } from 'uint8arraylist'
import { CapabilityRecord } from '../../../protocols/capability.js'
import { decodeBounded, LIMITS, MAX_BYTES, WireDecodeError, type WireDecoder } from '../../../protocols/codec.js'
import { SignedEnvelope } from '../../../protocols/envelope.js'
import { Heartbeat } from '../../../protocols/heartbeat.js'
import { DOMAIN } from '../../../protocols/ids.js'
import { Attestation, JobFrame, Receipt } from '../../../protocols/job.js'
import { FraudProof, HeartbeatSummary, LedgerEntry, SyncRequest, SyncResponse } from '../../../protocols/ledger.js'
import { AcceptRequest, AcceptResponse, Award, Bid, Decline, ExplainRequest, JobRequest } from '../../../protocols/market.js'
import { openAttestation, openReceipt } from '../../../src/exec/shared/records.js'
import { IdentityError, openEnvelope } from '../../../src/identity/index.js'
import { MarketError } from '../../../src/market/errors.js'
import { ExecError } from '../../../src/exec/errors.js'
import { readAcceptResponse, readDecline } from '../../../src/market/shared/messages.js'
import { fixtures } from '../fixtures.js'
import { bytesInput } from '../mutate.js'
import { BoundError, checkDecoded, type FuzzTarget, type TargetFactory } from '../target.js'

interface Codec extends WireDecoder<any> { encode: (value: any) => Uint8Array }

/** [message, codec, byte bound, limits (codec.ts LIMITS, or the ones compiled into the .proto)] */
const MESSAGES: Array<[string, Codec, number, Record<string, unknown> | undefined]> = [
  ['SignedEnvelope', SignedEnvelope, MAX_BYTES.signedEnvelope, undefined],
  ['Heartbeat', Heartbeat, MAX_BYTES.heartbeat, undefined],
  ['CapabilityRecord', CapabilityRecord, MAX_BYTES.capabilityRecord, LIMITS.capabilityRecord],
  ['JobRequest', JobRequest, MAX_BYTES.jobRequest, LIMITS.jobRequest],
  ['Bid', Bid, MAX_BYTES.bid, { addrs: 4 }],
  ['Award', Award, MAX_BYTES.award, LIMITS.award],
  ['AcceptRequest', AcceptRequest, MAX_BYTES.acceptRequest, undefined],
  ['AcceptResponse', AcceptResponse, MAX_BYTES.acceptResponse, undefined],
  ['ExplainRequest', ExplainRequest, MAX_BYTES.explainRequest, undefined],
  ['Decline', Decline, MAX_BYTES.decline, undefined],
  ['JobFrame', JobFrame, MAX_BYTES.jobFrame, LIMITS.jobFrame],
  ['Attestation', Attestation, MAX_BYTES.attestation, undefined],
  ['Receipt', Receipt, MAX_BYTES.receipt, undefined],
  ['LedgerEntry', LedgerEntry, MAX_BYTES.ledgerEntry, undefined],
  ['HeartbeatSummary', HeartbeatSummary, MAX_BYTES.heartbeatSummary, undefined],
  ['FraudProof', FraudProof, MAX_BYTES.fraudProof, LIMITS.fraudProof],
  ['SyncRequest', SyncRequest, MAX_BYTES.syncRequest, undefined],
  ['SyncResponse', SyncResponse, MAX_BYTES.syncResponse, LIMITS.syncResponse]
]

/** Inputs a little past the bound reach the oversize check; far past it only cost memory. */
const inputCap = (bound: number): number => Math.min(bound + 64, 96 * 1024)

function decoderTarget ([message, codec, maxBytes, limits]: typeof MESSAGES[number]): TargetFactory {
  return {
    name: `decode/${message}`,
    build: async () => {
      const fx = await fixtures()
      const seeds = message === 'SignedEnvelope' ? Object.values(fx.envelopes).flat() : fx.payloads[message]
      return {
        name: `decode/${message}`,
        what: `decodeBounded(${message}, ≤ ${maxBytes} B${limits == null ? '' : ', limits'})`,
        typed: [WireDecodeError],
        arbitrary: bytesInput(seeds, { maxBytes: inputCap(maxBytes) }),
        async: false,
        weight: 3,
        run: (input) => {
          // stream readers hand over a Uint8ArrayList: every third input goes in two pieces
          const bytes =
            input.length % 3 === 0
              ? new Uint8ArrayList(input.subarray(0, input.length >> 1), input.subarray(input.length >> 1))
              : input
          const decoded = decodeBounded(codec, bytes, message, maxBytes, limits as any)
          if (input.length > maxBytes) throw new BoundError(`${input.length} bytes decoded past the ${maxBytes}-byte bound`)
          checkDecoded(decoded, limits, input.length)
          // receivers re-encode some decoded messages (the ledger re-wraps envelopes): it must not throw
          codec.encode(decoded)
        }
      } satisfies FuzzTarget
    }
  }
}

/** openEnvelope as every receiver calls it: the seeds are envelopes of every domain, the domain asked for rotates. */
const envelopeTarget: TargetFactory = {
  name: 'envelope/open',
  build: async () => {
    const fx = await fixtures()
    const domains = Object.keys(fx.envelopes).filter(d => d !== 'vector')
    return {
      name: 'envelope/open',
      what: 'openEnvelope (size, structure, domain, signer, strict Ed25519)',
      typed: [IdentityError],
      arbitrary: bytesInput(Object.values(fx.envelopes).flat(), { maxBytes: 70 * 1024 }),
      async: false,
      weight: 1,
      run: (input) => {
        const domain = domains[input.length % domains.length]
        const opened = openEnvelope(input, { domain, maxBytes: 64 * 1024 })
        if (opened.payload.length > input.length) throw new BoundError('payload longer than the envelope')
      }
    }
  }
}

/**
 * The renter reads these from the accept and explain streams; the provider reads the receipt, the
 * renter the attestation.
 */
const streamReaders: TargetFactory = {
  name: 'envelope/stream-readers',
  build: async () => {
    const fx = await fixtures()
    const expectAttestation = {
      provider: fx.provider.peerId,
      renter: fx.renter.peerId,
      jobId: fx.job.jobId,
      awardHash: new Uint8Array(32),
      inputDigest: new Uint8Array(32)
    }
    const expectReceipt = {
      renter: fx.renter.peerId,
      provider: fx.provider.peerId,
      jobId: fx.job.jobId,
      attestationHash: fx.job.attestationHash
    }
    const readers = [
      (b: Uint8Array) => readAcceptResponse(b, fx.provider.peerId, fx.now),
      (b: Uint8Array) => readDecline(b, fx.provider.peerId, fx.now),
      (b: Uint8Array) => openAttestation(b, expectAttestation),
      (b: Uint8Array) => openReceipt(b, expectReceipt)
    ]
    const seeds = [DOMAIN.accept, DOMAIN.decline, DOMAIN.attestation, DOMAIN.receipt].flatMap(d => fx.envelopes[d])
    return {
      name: 'envelope/stream-readers',
      what: 'readAcceptResponse, readDecline, openAttestation, openReceipt',
      typed: [{ cls: MarketError, codes: ['ERR_MARKET_MESSAGE'] }, { cls: ExecError, codes: ['ERR_EXEC_RECORD'] }],
      arbitrary: bytesInput(seeds, { maxBytes: 4096 }),
      async: false,
      weight: 1,
      run: (input) => { readers[input.length % readers.length](input) }
    }
  }
}

export const wireTargets: TargetFactory[] = [...MESSAGES.map(decoderTarget), envelopeTarget, streamReaders]
