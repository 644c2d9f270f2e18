/**
 * The ledger's network inputs: entries (verifyEntry: envelope, author, time, body with its
 * inner envelopes, fraud-proof evidence), fraud proofs on their own, and both sides of the
 * sync protocol against a real LevelDB store: the server answering a fuzzed SyncRequest, and
 * the client running a whole session (heads pages, comparisons, pulls, ingest) against a peer
 * whose every answer is the fuzzed SyncResponse.
 */
import { defaultLogger } from '@libp2p/logger'
import { decodeBounded, LIMITS, MAX_BYTES, WireDecodeError } from '../../../protocols/codec.js'
import { DOMAIN } from '../../../protocols/ids.js'
import { SyncRequest, SyncResponse } from '../../../protocols/ledger.js'
import { sealEnvelope } from '../../../src/identity/index.js'
import { LEDGER_ENTRY_CODES, LedgerError } from '../../../src/ledger/errors.js'
import { verifyFraudProof } from '../../../src/ledger/entries/fraud.js'
import { LedgerIngest } from '../../../src/ledger/ingest/ingest.js'
import { SyncClient } from '../../../src/ledger/sync/client.js'
import { SyncServer } from '../../../src/ledger/sync/server.js'
import type { SyncRequests } from '../../../src/ledger/sync/requests.js'
import type { PeerId } from '@libp2p/interface'
import { MAX_HEADS, MAX_RANGE_ENTRIES } from '../../../src/ledger/sync/protocol.js'
import { verifyEntry } from '../../../src/ledger/ingest/verify.js'
import { tempDir } from '../../utils/wait.js'
import { fixtures, type Fixtures } from '../fixtures.js'
import { bytesInput } from '../mutate.js'
import { BoundError, checkDecoded, type CodedTyped, type TargetFactory } from '../target.js'

const ENTRY_REFUSED: CodedTyped = { cls: LedgerError, codes: LEDGER_ENTRY_CODES }
const SYNC_REFUSED: CodedTyped = { cls: LedgerError, codes: ['ERR_LEDGER_SYNC'] }

const verifyEntrySigned: TargetFactory = {
  name: 'ledger/verify-entry',
  build: async () => {
    const fx = await fixtures()
    return {
      name: 'ledger/verify-entry',
      what: 'verifyEntry on re-signed mutated LedgerEntry payloads (bodies, fraud proofs)',
      typed: [ENTRY_REFUSED],
      arbitrary: bytesInput(fx.payloads.LedgerEntry, { maxBytes: MAX_BYTES.ledgerEntry + 64 }),
      async: true,
      weight: 2,
      run: async (input) => {
        // the author field is usually one of the fixtures' peers: sign as whoever it names
        const signer =
          [fx.provider, fx.renter].find(s =>
            Buffer.from(input).includes(Buffer.from(s.peerId.toMultihash().bytes))
          ) ?? fx.provider
        await verifyEntry(sealEnvelope(signer.key, signer.peerId, DOMAIN.ledgerEntry, input), { now: fx.now })
      }
    }
  }
}

const fraudProofSigned: TargetFactory = {
  name: 'ledger/fraud-proof',
  build: async () => {
    const fx = await fixtures()
    return {
      name: 'ledger/fraud-proof',
      what: 'verifyFraudProof on re-signed mutated FraudProof payloads',
      typed: [ENTRY_REFUSED],
      arbitrary: bytesInput(fx.payloads.FraudProof, { maxBytes: MAX_BYTES.fraudProof + 64 }),
      async: true,
      weight: 1,
      run: async (input) => {
        await verifyFraudProof(sealEnvelope(fx.renter.key, fx.renter.peerId, DOMAIN.fraudProof, input), {
          builder: fx.renter.peerId.toString(),
          entryTime: fx.now
        })
      }
    }
  }
}

async function storeWith (
  fx: Fixtures,
  held: Uint8Array[]
): Promise<{ store: LedgerIngest, close: () => Promise<void> }> {
  const dir = await tempDir('idlegrid-fuzz-ledger-')
  const store = await LedgerIngest.open(dir.path, {
    privateKey: fx.other.key,
    peerId: fx.other.peerId,
    syncWrites: false
  })
  await store.ingest(held)
  return { store, close: async () => { await store.close(); await dir.cleanup() } }
}

/** Dials nowhere: a hint-triggered pull from the server side fails at once (and is logged). */
const noConnections: any = {
  getConnections: () => [],
  openConnection: async () => { throw new Error('the fuzz harness dials nobody') }
}

const syncServer: TargetFactory = {
  name: 'ledger/sync-request',
  build: async () => {
    const fx = await fixtures()
    const { store, close } = await storeWith(fx, [...fx.feeds.provider, ...fx.feeds.renter].map(r => r.envelope))
    const abort = new AbortController()
    const client = new SyncClient({ connectionManager: noConnections, ledger: () => store, selfId: fx.other.peerId.toString(), signal: abort.signal, log: defaultLogger().forComponent('fuzz') })
    const server = new SyncServer(() => store.store, client)
    return {
      name: 'ledger/sync-request',
      what: 'sync server: bounded SyncRequest decode, SyncServer.answer on a real store',
      typed: [WireDecodeError, SYNC_REFUSED],
      arbitrary: bytesInput(fx.payloads.SyncRequest, { maxBytes: MAX_BYTES.syncRequest + 64 }),
      async: true,
      weight: 2,
      run: async (input) => {
        const request = decodeBounded(SyncRequest, input, 'sync request', MAX_BYTES.syncRequest)
        const response = await server.answer(request, fx.provider.peerId)
        const encoded = SyncResponse.encode(response)
        if (encoded.length > MAX_BYTES.syncResponse) throw new BoundError(`sync response of ${encoded.length} bytes`)
        const inRanges = (response.ranges?.ranges ?? []).reduce((sum, r) => sum + r.entries.length, 0)
        if ((response.heads?.heads.length ?? 0) > MAX_HEADS || (response.entries?.entries.length ?? 0) > MAX_RANGE_ENTRIES || inRanges > MAX_RANGE_ENTRIES) throw new BoundError('sync response past its count bounds')
      },
      close: async () => { abort.abort(); await client.settled(); await close() }
    }
  }
}

const syncClient: TargetFactory = {
  name: 'ledger/sync-response',
  build: async () => {
    const fx = await fixtures()
    // holds the provider's first entry only: heads from the peer lead to pulls and fork checks
    const { store, close } = await storeWith(fx, [fx.feeds.provider[0].envelope])
    const abort = new AbortController()
    const client = new SyncClient({ connectionManager: noConnections, ledger: () => store, selfId: fx.other.peerId.toString(), signal: abort.signal, log: defaultLogger().forComponent('fuzz') })
    let answer: Uint8Array = new Uint8Array(0)
    let asked = 0
    // the peer: every request gets the fuzzed bytes, decoded as syncRequest() decodes a response;
    // a heads answer's answers_ranges is noted as the real request notes it
    const requests = (client as unknown as { requests: SyncRequests }).requests
    requests.request = async (peer) => {
      if (++asked > 10_000) throw new BoundError('a session sent more than 10 000 requests for one answer')
      let decoded: SyncResponse
      try {
        decoded = decodeBounded(SyncResponse, answer, 'sync response', MAX_BYTES.syncResponse, LIMITS.syncResponse)
      } catch (err) {
        throw new LedgerError('ERR_LEDGER_SYNC', err instanceof Error ? err.message : String(err), { cause: err })
      }
      if (decoded.heads != null) {
        (requests as unknown as { noteHeads: (p: PeerId, a: boolean) => void }).noteHeads(
          peer,
          decoded.heads.answersRanges
        )
      }
      return decoded
    }
    return {
      name: 'ledger/sync-response',
      what: 'sync client: a whole session (heads, compare, pull, ingest) against fuzzed answers',
      typed: [SYNC_REFUSED, ENTRY_REFUSED],
      arbitrary: bytesInput(fx.payloads.SyncResponse, { maxBytes: 96 * 1024 }),
      async: true,
      weight: 2,
      run: async (input) => {
        answer = input
        asked = 0
        try {
          const decoded = decodeBounded(SyncResponse, input, 'sync response', MAX_BYTES.syncResponse, LIMITS.syncResponse)
          checkDecoded(decoded, LIMITS.syncResponse, input.length)
        } catch (err) {
          if (!(err instanceof WireDecodeError)) throw err
        }
        await client.syncWith(fx.provider.peerId, 10_000)
      },
      close: async () => { abort.abort(); await client.settled(); await close() }
    }
  }
}

export const ledgerTargets: TargetFactory[] = [verifyEntrySigned, fraudProofSigned, syncServer, syncClient]
