import * as assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { Award } from '../../protocols/market.js'
import { toHex } from '../../src/common/index.js'
import { checkAwardRanking } from '../../src/market/shared/award-check.js'
import { buildAward } from '../../src/market/renter/award-offers.js'
import { localityTerms } from '../../src/market/renter/auction-report.js'
import { OVERCLAIM_BOOK, OverclaimBook } from '../../src/market/renter/overclaim-book.js'
import { parseJobSpec, toJobRequest } from '../../src/market/renter/job-spec.js'
import { CLAIM_TOLERANCE, judgeCacheClaim, type ShippedFile } from '../../src/market/shared/locality.js'
import { DEFAULT_RANKING, bidsDigest, rankBids, selectValidBids, type BidContext } from '../../src/market/shared/ranking.js'
import { fixedReputation } from '../../src/market/shared/reputation.js'
import { signedTestBid } from './fixtures.js'
import type { JobRequest } from '../../protocols/market.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

const MiB = 1024 * 1024
const digest = (s: string): Uint8Array => new Uint8Array(createHash('sha256').update(s).digest())

/** A job naming `named` (digests) with `datasetBytes` stated, shipping `shipped`. */
function jobNaming (named: Uint8Array[], datasetBytes?: number): JobRequest {
  const spec = parseJobSpec({ runtime: { image: 'ghcr.io/acme/eval:1' }, datasets: named.map(d => toHex(d)) })
  return toJobRequest({ ...spec, ...(datasetBytes != null ? { datasetBytes } : {}) }, { renter: new Uint8Array(34) })
}

describe('market: a winner\'s cache claim against its Held frame', () => {
  const big = digest('big')
  const mid = digest('mid')
  const small = digest('small')
  const manifest: ShippedFile[] = [
    { sha256: big, size: BigInt(900 * MiB) },
    { sha256: mid, size: BigInt(100 * MiB) },
    { sha256: small, size: 100n }
  ]
  const job = jobNaming([big, mid], 1000 * MiB)
  const held = (...ds: Uint8Array[]): Set<string> => new Set(ds.map(d => toHex(d)))
  /** the verdict on a claim of `bytes` (MiB) and `datasets` when Held names `heldDs` */
  const judge = (
    claim: { mib?: number, datasets: number }, heldDs: Uint8Array[], j: JobRequest = job
  ): ReturnType<typeof judgeCacheClaim> => judgeCacheClaim({
    job: j,
    claim: {
      cachedDatasets: claim.datasets,
      ...(claim.mib != null ? { cachedBytes: BigInt(Math.round(claim.mib * MiB)) } : {})
    },
    manifest,
    held: held(...heldDs)
  })

  it('a claim Held bears out is no overclaim', () => {
    const v = judge({ mib: 1000, datasets: 2 }, [big, mid, small])
    assert.equal(v.overclaim, false)
    assert.deepEqual(
      [v.claimedBytes, v.heldBytes, v.heldDatasets, v.credited, v.supported],
      [1000 * MiB, 1000 * MiB, 2, 1, 1]
    )
  })

  it('a claim of the whole input when Held names nothing is an overclaim, whatever the claim says beyond the job\'s bytes', () => {
    for (const mib of [1000, 50_000]) {
      const v = judge({ mib, datasets: 2 }, [])
      assert.equal(v.overclaim, true)
      assert.deepEqual([v.claimedBytes, v.heldBytes, v.credited, v.supported], [mib * MiB, 0, 1, 0])
    }
  })

  it('only named datasets of the manifest count: a held small input that is not named does not cover the claim', () => {
    const v = judge({ mib: 100, datasets: 1 }, [small])
    assert.equal(v.overclaim, true)
    assert.equal(v.heldBytes, 0)
  })

  it(`a shortfall within ${CLAIM_TOLERANCE * 100} % of the job's named bytes is tolerated; beyond it, it is not`, () => {
    // Held names 900 of the job's 1000 MiB
    assert.equal(judge({ mib: 950, datasets: 2 }, [big]).overclaim, false)
    assert.equal(judge({ mib: 951, datasets: 2 }, [big]).overclaim, true)
  })

  it('a job naming a dataset it does not ship: no verdict on the bytes (the claim may count its bytes)', () => {
    const elsewhere = digest('not shipped')
    const v = judge({ mib: 5000, datasets: 1 }, [], jobNaming([big, elsewhere], 900 * MiB))
    assert.equal(v.overclaim, false)
    assert.match(v.unverifiable ?? '', /names 1 dataset it does not ship/)
  })

  it('by digests (no bytes stated): an unshipped dataset counts as held, a shipped one must be in Held', () => {
    const elsewhere = digest('not shipped')
    const byCount = jobNaming([big, elsewhere])
    assert.equal(judge({ datasets: 1 }, [], byCount).overclaim, false)
    const v = judge({ datasets: 2 }, [], byCount)
    assert.equal(v.overclaim, true)
    assert.deepEqual([v.credited, v.supported], [1, 0.5])
    assert.equal(judge({ datasets: 2 }, [big], byCount).overclaim, false)
  })

  it('a bid that claimed nothing is never an overclaim', () => {
    assert.equal(judge({ datasets: 0 }, []).overclaim, false)
  })
})

describe('market: the renter\'s book of overclaimers', () => {
  it(`keeps a provider for ${OVERCLAIM_BOOK.forMs / 3_600_000} h after its last overclaim, then forgets it`, () => {
    let now = 1_000_000
    const book = new OverclaimBook({ now: () => now })
    book.note('liar', { claimedBytes: 10, heldBytes: 0 })
    assert.equal(book.has('liar'), true)
    assert.equal(book.has('honest'), false)
    now += OVERCLAIM_BOOK.forMs - 1
    assert.equal(book.has('liar'), true)
    book.note('liar', { claimedBytes: 20, heldBytes: 0 })
    now += OVERCLAIM_BOOK.forMs - 1
    assert.equal(book.get('liar')?.claimedBytes, 20, 'a new overclaim starts the period again')
    now += 1
    assert.equal(book.has('liar'), false)
    assert.equal(book.size, 0, 'an expired entry is dropped when looked at')
  })

  it('is bounded: a flood of provider ids keeps the newest, never more than its bound', () => {
    let now = 0
    const book = new OverclaimBook({ now: () => now, maxProviders: 100 })
    for (let i = 0; i < 10_000; i++) { now++; book.note(`p${i}`, { claimedBytes: 1, heldBytes: 0 }) }
    assert.equal(book.size, 100)
    assert.equal(book.has('p9999'), true)
    assert.equal(book.has('p9900'), true)
    assert.equal(book.has('p9899'), false)
    assert.equal(new OverclaimBook().size, 0)
    assert.equal(OVERCLAIM_BOOK.maxProviders, 1_000)
  })

  it('drops expired entries when noting a new one', () => {
    let now = 0
    const book = new OverclaimBook({ now: () => now, forMs: 10 })
    book.note('a', { claimedBytes: 1, heldBytes: 0 })
    now = 11
    book.note('b', { claimedBytes: 1, heldBytes: 0 })
    assert.equal(book.size, 1)
  })
})

describe('market: an overclaimer\'s bids get no locality credit, and the award says so', () => {
  interface Party { key: Ed25519PrivateKey, peerId: PeerId }
  const party = async (): Promise<Party> => {
    const key = await generateKeyPair('Ed25519')
    return { key, peerId: peerIdFromPrivateKey(key) }
  }

  it('the lying bid beats a cheaper honest one until the renter books it; then the honest one wins, and an auditor agrees', async () => {
    const [renter, liar, honest] = await Promise.all([party(), party(), party()])
    const job = toJobRequest(
      {
        ...parseJobSpec({ runtime: { image: 'ghcr.io/acme/eval:1' }, datasets: [toHex(digest('d'))], auction: { pricing: 'second-price' } }),
        datasetBytes: 1000 * MiB
      },
      { renter: renter.peerId.toMultihash().bytes }
    )
    // claiming all of it multiplies the score by 0.8: 2.90 (score 2.32) beats 2.50 claiming nothing
    const bids = [
      signedTestBid(liar, job, 2.9, { cachedDatasets: 1, cachedBytes: BigInt(1000 * MiB) }),
      signedTestBid(honest, job, 2.5)
    ]
    const book = new OverclaimBook()
    const rank = (ctx: BidContext): ReturnType<typeof rankBids> =>
      rankBids(selectValidBids(bids, job, ctx, Date.now()).valid, job, ctx)
    const reputation = fixedReputation({}, 1)
    assert.equal(rank({ reputation, noLocality: book })[0]?.provider, liar.peerId.toString())

    book.note(liar.peerId.toString(), { claimedBytes: 1000 * MiB, heldBytes: 0 })
    const ranked = rank({ reputation, noLocality: book })
    assert.equal(ranked[0]?.provider, honest.peerId.toString())
    const denied = ranked[1]
    assert.deepEqual([denied?.locality, denied?.localityDenied], [0, true])
    assert.equal(ranked[0]?.localityDenied, undefined, 'a bid that claimed nothing is not marked')
    const why = localityTerms(denied as (typeof ranked)[number], book).noLocality
    assert.match(why ?? '', /^cache-overclaim: .*claimed 1000\.0 MiB, held 0\.0 MiB/)

    const { valid } = selectValidBids(bids, job, { reputation }, Date.now())
    const award = buildAward(
      { job, ranked, digest: bidsDigest(valid), acceptTimeoutMs: 3_000, params: DEFAULT_RANKING },
      0
    )
    const wire = Award.decode(Award.encode(award))
    assert.deepEqual(wire.ranking.map(i => i.localityDenied), [undefined, true])
    assert.deepEqual(checkAwardRanking(wire, bids, job).problems, [], 'an auditor re-derives the award from the flag')
    // without the flag (a renter that denied credit and did not say so) the award does not check
    const unsaid = { ...wire, ranking: wire.ranking.map(({ localityDenied: _, ...i }) => i) }
    assert.equal(checkAwardRanking(unsaid, bids, job).ok, false)
  })
})
