/**
 * market-answers.json (issue 41): every answer a market stream gives, as a receiver reads it:
 * each BidAck status (KEPT encodes to an empty frame), each AcceptResponse reason (accepted, and
 * a decline with every DeclineReason) and each Decline reason on explain. The meanings of the
 * reasons, and which check gives which, are in protocols/README.md §7 "Auction".
 */

import { envelopeMaxBytes, MAX_BYTES } from '../../../protocols/codec.js'
import { DOMAIN, SIGNING_PREFIX } from '../../../protocols/ids.js'
import { AcceptResponse, BidAck, Decline, DeclineReason } from '../../../protocols/market.js'
import { accept, envelopeMeaning, keyEntry, NOW, party, reject, seal } from './build.js'
import { VECTOR_FORMAT, type Vector, type VectorFile } from './format.js'

const JOB_ID = Uint8Array.from(Buffer.from('5e8c9902207afaeb7120430c585a445f', 'hex'))

/** Every DeclineReason, in enum order (the generated enum maps each name to itself; its codec is a function). */
const REASONS = Object.values(DeclineReason).filter((v): v is DeclineReason => typeof v === 'string')

export async function makeMarketAnswers (): Promise<VectorFile> {
  const bob = await party('bob')
  const ack = { type: 'BidAck', check: { kind: 'message' as const, maxBytes: MAX_BYTES.bidAck } }
  const acks: Vector[] = [
    accept({ name: 'bid-ack-kept-empty-frame', ...ack, bytes: BidAck.encode({ status: BidAck.Status.KEPT, detail: '' }), note: 'KEPT is 0 and the detail empty: the frame has no bytes, and is a whole answer' }, BidAck),
    accept({ name: 'bid-ack-not-kept', ...ack, bytes: BidAck.encode({ status: BidAck.Status.NOT_KEPT, detail: '' }), note: 'does not fit the job, over the signer cap, or not better than the signer\'s kept bid' }, BidAck),
    accept({ name: 'bid-ack-late', ...ack, bytes: BidAck.encode({ status: BidAck.Status.LATE, detail: '' }) }, BidAck),
    accept({ name: 'bid-ack-unknown-auction', ...ack, bytes: BidAck.encode({ status: BidAck.Status.UNKNOWN_AUCTION, detail: '' }), note: 'no auction of that job id here, or one with another nonce' }, BidAck),
    accept({ name: 'bid-ack-invalid-with-detail', ...ack, bytes: BidAck.encode({ status: BidAck.Status.INVALID, detail: 'wrong-signer: the bid was not sent by its signer' }) }, BidAck),
    reject({ name: 'bid-ack-oversized', ...ack, bytes: BidAck.encode({ status: BidAck.Status.INVALID, detail: 'x'.repeat(300) }), stage: 'size', note: `over the ${MAX_BYTES.bidAck}-byte bound: a detail is at most 128 characters` }, 'oversized', BidAck)
  ]
  const answer = { type: 'SignedEnvelope', payloadType: 'AcceptResponse', check: { kind: 'envelope' as const, domain: DOMAIN.accept, maxBytes: envelopeMaxBytes(MAX_BYTES.acceptResponse) } }
  const response = (accepted: boolean, reason: DeclineReason, detail: string): Uint8Array =>
    seal(
      bob,
      DOMAIN.accept,
      AcceptResponse.encode({
        jobId: JOB_ID,
        provider: bob.id,
        attempt: 1,
        accepted,
        reason,
        detail,
        createdAt: BigInt(NOW)
      })
    )
  const accepts: Vector[] = [
    accept({ name: 'accept-accepted', ...answer, bytes: response(true, DeclineReason.REASON_UNSPECIFIED, ''), decoded: envelopeMeaning(response(true, DeclineReason.REASON_UNSPECIFIED, ''), AcceptResponse) }),
    ...REASONS.filter(r => r !== 'REASON_UNSPECIFIED' && r !== 'WILL_BID').map(r => {
      const bytes = response(false, r, `declined: ${r}`)
      return accept({ name: `accept-declined-${r.toLowerCase().replace(/_/g, '-')}`, ...answer, bytes, decoded: envelopeMeaning(bytes, AcceptResponse) })
    })
  ]
  const explain = { type: 'SignedEnvelope', payloadType: 'Decline', check: { kind: 'envelope' as const, domain: DOMAIN.decline, maxBytes: envelopeMaxBytes(MAX_BYTES.decline) } }
  const decline = (reason: DeclineReason, detail: string): Uint8Array =>
    seal(
      bob,
      DOMAIN.decline,
      Decline.encode({ jobId: JOB_ID, provider: bob.id, reason, detail, createdAt: BigInt(NOW) })
    )
  const declines: Vector[] = [
    ...REASONS.filter(r => r !== 'REASON_UNSPECIFIED').map(r => {
      const bytes = decline(r, r === 'WILL_BID' ? 'would bid 1.25 USD/GPU-h on h100-80gb' : `declined: ${r}`)
      return accept({ name: `explain-${r.toLowerCase().replace(/_/g, '-')}`, ...explain, bytes, decoded: envelopeMeaning(bytes, Decline) })
    }),
    reject({ name: 'explain-answer-opened-as-accept', ...answer, bytes: decline(DeclineReason.VRAM, 'needs 80 GiB'), decoded: envelopeMeaning(decline(DeclineReason.VRAM, 'needs 80 GiB'), Decline), stage: 'domain', note: 'a Decline signed for "decline" where an AcceptResponse ("accept") is read' }, 'wrong-domain')
  ]
  return {
    format: VECTOR_FORMAT,
    description: 'market answers: BidAck on /idlegrid/bid/1.0.0 (unsigned, read whole within its bound), AcceptResponse on /idlegrid/accept/1.0.0 and Decline on /idlegrid/explain/1.0.0 (signed by the provider), every status and reason',
    now: NOW,
    signingPrefix: SIGNING_PREFIX,
    keys: { bob: keyEntry(bob) },
    vectors: [...acks, ...accepts, ...declines]
  }
}
