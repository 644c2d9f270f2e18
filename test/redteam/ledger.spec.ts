/**
 * Red team, the ledger attacks of issue 12, each played by a separate attacker process
 * (attacker.js) whose entries travel over gossip and sync to separate `idlegrid` processes on
 * 127.0.0.1: a bootstrap, two honest providers (process runner) and a renter that `idlegrid
 * submit` runs real jobs through. What each honest process believes is read over its control
 * socket (`reputation`, `ledger.status`, `status`: what the CLI prints). One network for the file.
 * The honest processes run with --ledger-gossip: the legacy ledger topic is off by default
 * (entries travel by announcement and sync, where the same store rules judge them), and the
 * entries the attacker's own store would refuse can only reach a node that opened the topic.
 */
import * as assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { TOPIC } from '../../protocols/ids.js'
import { callControl } from '../../src/control/client.js'
import { PROOF_BUDGET } from '../../src/ledger/ingest/quota.js'
import { maxDropPerCounterparty } from '../../src/ledger/reputation/reputation.js'
import { submitJob } from '../exec/fixtures.js'
import { DEFAULT_PROVIDER_ARGS, recordAttack, startLocalNetwork, tempDir, waitFor, waitForMesh, type LocalNetwork, type NodeProcess } from '../utils/index.js'
import { startAttacker, type AttackerProcess } from './harness.js'

interface Rep {
  peerId: string
  score: number
  evidenceScore: number
  slashed: boolean
  jobs: number
  ok: number
  broken: number
}
interface Status {
  slashed: string[]
  diskBytes: number
  pending: number
  heads: Array<{ author: string, seq: number, hash: string, bytes: number }>
  quarantine: { authors: number, entries: number, bytes: number, evicted: number }
}

const reputation = async (n: NodeProcess, peer: string, now: number): Promise<Rep> => ((await callControl(n.dataDir, 'reputation', { peer, now }, { timeoutMs: 10_000 })) as Rep[])[0] as Rep
const ledgerStatus = async (n: NodeProcess): Promise<Status> => await callControl(n.dataDir, 'ledger.status', {}, { timeoutMs: 10_000 }) as Status
const headOf = (s: Status, author: string): { seq: number, hash: string, bytes: number } | undefined =>
  s.heads.find(h => h.author === author)
/** The ledger topic's gossip verdicts on `n` (`status` control method). */
const ledgerVerdicts = async (n: NodeProcess): Promise<Record<string, number>> => ((await callControl(n.dataDir, 'status', {}, { timeoutMs: 10_000 })) as { gossip: Record<string, Record<string, number>> }).gossip[TOPIC.ledger] ?? {}
const judged = (v: Record<string, number>): number => Object.values(v).reduce((a, b) => a + b, 0)

describe('red team: ledger attacks from a separate attacker process (issue 12)', function () {
  this.timeout(120_000)
  let net: LocalNetwork
  let tmp: { path: string, cleanup: () => Promise<void> }
  const attackers: AttackerProcess[] = []
  const renter = (): NodeProcess => net.renters[0] as NodeProcess
  let runs = 0

  before(async () => {
    tmp = await tempDir('idlegrid-redteam-ledger-')
    net = await startLocalNetwork({ baseDir: tmp.path, providers: 2, renters: 1, bootstrapArgs: ['--ledger-gossip'], renterArgs: () => ['--ledger-gossip'], providerArgs: () => ['--runner', 'process', ...DEFAULT_PROVIDER_ARGS, '--ledger-gossip'] })
    const view = await waitForMesh(net.all, 60_000)
    assert.ok(view.complete, view.missing.join('\n'))
    const auction = ['auction:', '  bidWindowMs: 1500', '  acceptTimeoutMs: 3000']
    await writeFile(join(tmp.path, 'true.yaml'), ['name: honest', 'tier: silver', 'workload: evaluation', 'runtime:', '  command: [/bin/true]', 'estimatedMinutes: 1', ...auction].join('\n') + '\n')
  })

  after(async () => {
    await Promise.all(attackers.splice(0).map(async a => await a.stop(2_000)))
    await net?.stop()
    await tmp?.cleanup()
  })

  async function attacker (name: string, options?: Record<string, string | number>): Promise<AttackerProcess> {
    const a = await startAttacker(name, { bootstrap: net.bootstrap.addrs[0] as string, baseDir: tmp.path, options })
    attackers.push(a)
    return a
  }

  /** `idlegrid submit true.yaml --json` on the renter: an honest job that completes and verifies. */
  async function honestJob (extra: string[] = []): Promise<Record<string, any>> {
    const run = await submitJob(renter().dataDir, tmp.path, 'true.yaml', ['--out-dir', join(tmp.path, `out-${++runs}`), ...extra], 60_000)
    assert.equal(run.code, 0, `${JSON.stringify(run.summary)}\n${run.stderr.slice(-2000)}`)
    if (!extra.includes('--auction-only')) assert.equal(run.summary.status, 'ok', JSON.stringify(run.summary))
    return run.summary
  }

  /** Waits until every process holds `author`'s feed up to `seq` (and, given, with that head hash). */
  async function everywhere (author: string, seq: number, what: string, hash?: string): Promise<void> {
    await waitFor(async () => {
      const statuses = await Promise.all(net.all.map(ledgerStatus))
      return statuses.every(s => {
        const h = headOf(s, author)
        return h != null && h.seq >= seq && (hash == null || h.hash === hash)
      })
    }, { timeoutMs: 30_000, intervalMs: 250, what })
  }

  /** Waits until the honest processes together rejected `code` on the ledger topic `count` more times than `before`. */
  async function rejected (code: string, before: number[]): Promise<number> {
    let seen = 0
    await waitFor(async () => {
      const now = await Promise.all(net.all.map(ledgerVerdicts))
      seen = now.reduce((sum, v, i) => sum + (v[`reject:${code}`] ?? 0) - (before[i] ?? 0), 0)
      return seen >= 1
    }, { timeoutMs: 20_000, intervalMs: 250, what: `a gossip reject ${code}` })
    return seen
  }
  const rejectsNow = async (code: string): Promise<number[]> => (await Promise.all(net.all.map(ledgerVerdicts))).map(v => v[`reject:${code}`] ?? 0)

  it('red team 12.1: a forged BAD_OUTPUT fraud proof from another process slashes nobody; the victim keeps working', async () => {
    const a = await attacker('forged-slash')
    const ran = await a.line(l => l?.ran === true, 60_000)
    const attackerId = a.peerIds[0] as string
    const victim = ran.victim as string
    assert.ok(net.providers.some(p => p.peerId === victim), 'the attacker\'s real job ran on an honest provider')
    await everywhere(attackerId, ran.okReceiptSeq, 'the attacker\'s OK receipt everywhere')
    const at = Date.now() + 60_000
    const before = await Promise.all(net.all.map(async n => await reputation(n, victim, at)))
    const rejectsBefore = await rejectsNow('ERR_LEDGER_FRAUD_PROOF')
    a.go()
    const { result, error } = await a.outcome
    assert.equal(error, undefined, error)
    const rejects = await rejected('ERR_LEDGER_FRAUD_PROOF', rejectsBefore)
    await everywhere(attackerId, result?.rerunReceiptSeq, 'the attacker\'s receipts everywhere')
    const statuses = await Promise.all(net.all.map(ledgerStatus))
    const after = await Promise.all(net.all.map(async n => await reputation(n, victim, at)))
    const maxDrop = maxDropPerCounterparty()
    for (const [i, n] of net.all.entries()) {
      assert.equal(after[i]?.slashed, false, `${n.role} slashed the victim`)
      assert.ok(!statuses[i]?.slashed.includes(victim), `${n.role} lists the victim as slashed`)
      assert.equal(headOf(statuses[i] as Status, attackerId)?.seq, result?.rerunReceiptSeq, `${n.role} stored the proof entry`)
      const drop = (before[i]?.score ?? 0) - (after[i]?.score ?? 0)
      assert.ok(drop <= maxDrop, `${n.role}: the victim's score dropped ${drop} > one renter's share ${maxDrop}`)
    }
    // honest service continues: the renter's next job completes (on either honest provider)
    const next = await honestJob()
    recordAttack({
      issue: '12.1',
      attack: 'attacker process: real job on the victim, then a BAD_OUTPUT fraud proof with a throwaway key\'s fake re-run',
      got: `slashed on 0/${net.all.length} processes (${rejects} gossip rejects); victim's score on the bootstrap ${(before[0]?.score ?? 0).toFixed(3)} -> ${(after[0]?.score ?? 0).toFixed(3)} (evidence ${(before[0]?.evidenceScore ?? 0).toFixed(3)} -> ${(after[0]?.evidenceScore ?? 0).toFixed(3)}); next honest job ${String(next.status)}`,
      limit: `only equivocation slashes; one renter's BAD_OUTPUT costs <= ${maxDrop.toFixed(3)}`
    })
  })

  it('red team 12.2: a Sybil ring of 100 fresh keys from another process lifts its provider ≤ 0.02 above a newcomer, and it does not win an auction at the honest price', async () => {
    const verdictsBefore = await Promise.all(net.all.map(ledgerVerdicts))
    const a = await attacker('sybil-ring', { keys: 100, jobs: 100 })
    const ringed = await a.line(l => l?.ringed === true, 60_000)
    const ring = ringed.provider as string
    // every honest process judged the ring's entries (stored, quarantined or refused)
    await waitFor(async () => {
      const now = await Promise.all(net.all.map(ledgerVerdicts))
      return now.every((v, i) => judged(v) - judged(verdictsBefore[i] ?? {}) >= 2 * ringed.jobs)
    }, { timeoutMs: 30_000, intervalMs: 250, what: 'every process to judge the ring\'s entries' })
    const newcomerKey = await generateKeyPair('Ed25519')
    const newcomer = peerIdFromPrivateKey(newcomerKey).toString()
    const at = Date.now() + 60_000
    const lifts: number[] = []
    const seen: string[] = []
    for (const n of net.all) {
      const [r, fresh] = await Promise.all([reputation(n, ring, at), reputation(n, newcomer, at)])
      lifts.push(r.score - fresh.score)
      seen.push(`${n.role} ${r.score.toFixed(3)} (evidence ${r.evidenceScore.toFixed(3)}, ${r.jobs} jobs) vs newcomer ${fresh.score.toFixed(3)}`)
      assert.ok(r.score <= fresh.score + 0.02, `${n.role}: the ring's provider scores ${r.score}, a newcomer ${fresh.score}`)
    }
    // the auction: the ring bids at the lowest honest price for the renter's next job
    a.go()
    const auction = await honestJob(['--auction-only'])
    const { result, error } = await a.outcome
    assert.equal(error, undefined, error)
    assert.equal(result?.bid, true, `the ring bid: ${JSON.stringify(result)}`)
    const winner = auction.award?.winner as string
    assert.ok(net.providers.some(p => p.peerId === winner), `the award went to ${winner}, the ring is ${ring}`)
    const bids = auction.bids as Array<{ provider: string, priceMicroUsd: string }>
    const ringBid = bids.some(b => b.provider === ring)
    // the attack as meant: its bid reached the auction at the lowest honest price (found by its probe)
    const honest = bids.filter(b => b.provider !== ring).map(b => BigInt(b.priceMicroUsd))
    assert.ok(ringBid && honest.length > 0, `the ring's bid and an honest one in the auction: ${JSON.stringify(bids)}`)
    assert.equal(String(result?.priceMicroUsd), honest.reduce((a, b) => (a < b ? a : b)).toString(), 'the ring bid the lowest honest price')
    // what the renter's ranking saw: the winner's reliability next to the ring's
    const [winnerRep, ringRep] = await Promise.all([
      reputation(renter(), winner, Date.now()),
      reputation(renter(), ring, Date.now())
    ])
    console.log(`      [figures] ring provider as each process sees it: ${seen.join('; ')}; ring bid ${String(result?.priceMicroUsd)} µUSD/h ${ringBid ? 'in' : 'not in'} the auction, winner ${winner.slice(-8)}`)
    recordAttack({
      issue: '12.2',
      attack: `attacker process: ${String(ringed.keys)} fresh keys receipt ${String(ringed.jobs)} made-up jobs of a fresh provider key, which then bids at the lowest honest price`,
      got: `lift over a newcomer ${Math.max(...lifts).toFixed(3)} (max of ${net.all.length} processes); ring bid ${ringBid ? 'in' : 'not in'} the renter's auction at the honest price; award to an honest provider (renter's view: winner ${winnerRep.score.toFixed(3)}, ring ${ringRep.score.toFixed(3)})`,
      limit: '≤ 0.02 above a newcomer; never outranks an honest provider at the same price'
    })
  })

  it('red team 12.3: a back-dated receipt from another process is refused on every process and moves no score', async () => {
    const a = await attacker('backdated-receipt')
    const ran = await a.line(l => l?.ran === true, 60_000)
    const attackerId = a.peerIds[0] as string
    const provider = ran.provider as string
    await everywhere(attackerId, ran.okReceiptSeq, 'the attacker\'s OK receipt everywhere')
    const at = Date.now() + 60_000
    const before = await Promise.all(net.all.map(async n => await reputation(n, provider, at)))
    const rejectsBefore = await rejectsNow('ERR_LEDGER_TIME_ORDER')
    a.go()
    const backdated = await a.line(l => l?.backdated === true)
    const rejects = await rejected('ERR_LEDGER_TIME_ORDER', rejectsBefore)
    for (const [i, s] of (await Promise.all(net.all.map(ledgerStatus))).entries()) {
      assert.equal(headOf(s, attackerId)?.seq, ran.okReceiptSeq, `${net.all[i]?.role ?? ''} stored the back-dated receipt (seq ${String(backdated.seq)})`)
    }
    // then the same PREEMPTED receipt dated as the feed allows: stored, not counted
    a.go()
    const { result, error } = await a.outcome
    assert.equal(error, undefined, error)
    await everywhere(attackerId, result?.laterSeq, 'the later-dated receipt everywhere', result?.laterHash)
    const after = await Promise.all(net.all.map(async n => await reputation(n, provider, at)))
    for (const [i, n] of net.all.entries()) {
      assert.equal(after[i]?.score, before[i]?.score, `${n.role}: the score moved`)
      assert.equal(after[i]?.evidenceScore, before[i]?.evidenceScore, `${n.role}: the evidence score moved`)
      assert.equal(after[i]?.broken, 0, `${n.role} counts a broken job`)
    }
    recordAttack({
      issue: '12.3',
      attack: 'attacker process: real job, then a PREEMPTED receipt for it dated 1 h before its OK receipt (and one dated as its feed allows)',
      got: `back-dated entry stored on 0/${net.all.length} processes (${rejects} gossip rejects ERR_LEDGER_TIME_ORDER); score ${(before[0]?.score ?? 0).toFixed(3)} -> ${(after[0]?.score ?? 0).toFixed(3)}; broken jobs 0`,
      limit: 'feed times non-decreasing; first receipt per attestation counts; PREEMPTED only for an attested PREEMPTED'
    })
  })

  it('red team 12.4: 1000 junk entries from another process grow no honest ledger by more than 1 MB; an honest job\'s receipt still reaches every process', async () => {
    const before = await Promise.all(net.all.map(ledgerStatus))
    const verdictsBefore = await Promise.all(net.all.map(ledgerVerdicts))
    const a = await attacker('ledger-flood', { entries: 1000 })
    const flooded = await a.line(l => l?.flooded === true, 60_000)
    assert.equal(flooded.published, 1000)
    // the processes the flooder sends to judge the junk; junk without standing is quarantined, not
    // relayed, so the others may see none of it: wait until the verdicts stop moving
    let last = ''
    let unchanged = 0
    let counts: number[] = []
    await waitFor(async () => {
      counts = (await Promise.all(net.all.map(ledgerVerdicts))).map(
        (v, i) => judged(v) - judged(verdictsBefore[i] ?? {})
      )
      const key = counts.join(',')
      unchanged = key === last ? unchanged + 1 : 0
      last = key
      // all 1000 judged by the process the flooder sends to, or nothing new anywhere for 2 s
      return counts.some(c => c >= 1000) || (unchanged >= 2 && counts.some(c => c > 0))
    }, { timeoutMs: 60_000, intervalMs: 1_000, what: 'every process to finish judging the junk' })
    // or the peer guard cut it short: past its ledger gossip allowance the flooder is denied and
    // disconnected (src/node/guard/peer-guard.ts)
    const deniedBy = (await Promise.all(net.all.map(async n => await n.status())))
      .filter(s => s.peerGuard.denied.some(d => d.peerId === a.peerIds[0]))
      .map(s => s.role)
    assert.ok(Math.max(...counts) >= 500 || deniedBy.length > 0, `the flood reached the network: ${counts.join('/')} entries judged`)
    const { result, error } = await a.stop()
    assert.equal(error, undefined, error)
    // honest entries still replicate: the renter's receipt of a new job reaches every process
    await honestJob()
    const renterHead = headOf(await ledgerStatus(renter()), renter().peerId)
    assert.ok(renterHead != null)
    await everywhere(renter().peerId, renterHead.seq, 'the honest receipt everywhere', renterHead.hash)
    const after = await Promise.all(net.all.map(ledgerStatus))
    const grown = after.map((s, i) => s.diskBytes - (before[i]?.diskBytes ?? 0))
    console.log(`      [figures] junk judged per process ${counts.join('/')} (flooder denied by ${deniedBy.join(', ') || 'none'}); ledger growth on disk ${grown.join('/')} bytes; quarantine ${JSON.stringify(after.map(s => s.quarantine))}`)
    for (const [i, n] of net.all.entries()) {
      assert.ok((grown[i] ?? 0) <= 1_000_000, `${n.role}'s ledger grew by ${grown[i]} bytes`)
      assert.equal(after[i]?.slashed.length, before[i]?.slashed.length, `${n.role} slashed junk authors`)
    }
    recordAttack({
      issue: '12.4',
      attack: `attacker process: 1000 junk equivocation-proof entries (${((result?.bytes ?? 0) / 1000 / 1024).toFixed(1)} KiB each, throwaway keys)`,
      got: `ledger on disk +${(Math.max(...grown) / 1e6).toFixed(3)} MB at most over ${net.all.length} processes; 0 junk authors slashed; entries judged per process ${counts.join('/')}, quarantine ${after.map(s => s.quarantine.entries).join('/')} entries; honest receipt replicated`,
      limit: '≤ 1 MB growth per honest node; honest entries keep replicating'
    })
  })
  it('red team 36.1: 6 fresh keys, each answering a sync range with 128 pairs of conflicting signed entries (~14.5 KiB each), grow no honest ledger, nor its own feed, by more than 1 MB; at most one proof per accused key', async function () {
    // the code before the fix wrote hundreds of proofs on each victim: give that time to show
    this.timeout(300_000)
    const before = await Promise.all(net.all.map(ledgerStatus))
    const a = await attacker('equivocation-flood', { pairs: 128, peers: net.all.map(n => n.addrs[0] as string).join(',') })
    await a.line(l => l?.serving === true)
    a.go()
    const answered = await a.line(l => l?.answered === true, 120_000)
    assert.ok(answered.answers >= net.all.length, `the victims pulled the pairs: ${JSON.stringify(answered)}`)
    const keys = new Set(a.peerIds)
    // every process judged them, wrote what proofs it writes and pulled the others': until each
    // has slashed an attacker key (what is asserted below) and nothing moves for 3 s. A quiet 3 s
    // alone is not enough: under load a victim's next pull can come later than that (CI: slashed
    // 2/2/1/0 of 6 when the wait ended). Past the bound, the assertions below say what is missing.
    let last = ''
    let unchanged = 0
    await waitFor(async () => {
      const now = await Promise.all(net.all.map(ledgerStatus))
      const key = now.map(s => `${s.slashed.length}:${s.heads.reduce((sum, h) => sum + h.seq, 0)}`).join(',')
      unchanged = key === last ? unchanged + 1 : 0
      last = key
      return unchanged >= 3 && now.every(s => s.slashed.some(id => keys.has(id)))
    }, { timeoutMs: 120_000, intervalMs: 1_000, what: 'every process to settle after the equivocations' }).catch(() => {})
    const { error } = await a.stop()
    assert.equal(error, undefined, error)
    const after = await Promise.all(net.all.map(ledgerStatus))
    const grown = after.map((s, i) => s.diskBytes - (before[i]?.diskBytes ?? 0))
    const ownGrown = net.all.map(
      (n, i) =>
        (headOf(after[i] as Status, n.peerId)?.bytes ?? 0) - (headOf(before[i] as Status, n.peerId)?.bytes ?? 0)
    )
    // the proofs each process wrote into its own feed, per accused attacker key
    const proofs = await Promise.all(net.all.map(async n => {
      const shown = await callControl(n.dataDir, 'ledger.show', { peer: n.peerId, limit: 256 }, { timeoutMs: 10_000 }) as { entries: Array<{ summary: { accused?: string } }> }
      const per = new Map<string, number>()
      for (const e of shown.entries) {
        if (e.summary.accused != null && keys.has(e.summary.accused)) {
          per.set(e.summary.accused, (per.get(e.summary.accused) ?? 0) + 1)
        }
      }
      return per
    }))
    const slashedKeys = after.map(s => s.slashed.filter(id => keys.has(id)).length)
    console.log(`      [figures] ${String(answered.answers)} range answers of ${String(answered.entries / answered.answers)} entries (${String(answered.entryBytes)} B each); ledger growth on disk ${grown.join('/')} bytes; own feed ${ownGrown.join('/')} bytes; own proofs ${proofs.map(p => [...p.values()].reduce((x, y) => x + y, 0)).join('/')}; attacker keys slashed ${slashedKeys.join('/')} of ${keys.size}; pending ${after.map(s => s.pending).join('/')}, quarantined ${after.map(s => s.quarantine.entries).join('/')}; roles ${net.all.map(n => n.role).join('/')}`)
    for (const [i, n] of net.all.entries()) {
      assert.ok((grown[i] ?? 0) <= 1_000_000, `${n.role}'s ledger grew by ${grown[i]} bytes`)
      assert.ok((ownGrown[i] ?? 0) <= 1_000_000, `${n.role}'s own feed grew by ${ownGrown[i]} bytes`)
      const most = Math.max(0, ...(proofs[i] as Map<string, number>).values())
      assert.ok(most <= 1, `${n.role} wrote ${most} proofs against one key`)
      assert.ok((proofs[i] as Map<string, number>).size <= PROOF_BUDGET.proofs, `${n.role} wrote ${(proofs[i] as Map<string, number>).size} proofs, over its budget`)
      assert.ok((slashedKeys[i] ?? 0) >= 1, `${n.role} slashed none of the equivocating keys`)
    }
    recordAttack({
      issue: '36.1',
      attack: `attacker process: ${keys.size} fresh keys, each answering every sync range of its feed with ${String(answered.entries / answered.answers / 2)} pairs of different validly signed entries at the same seqs (${(answered.entryBytes / 1024).toFixed(1)} KiB each), pulled at once through a heads hint`,
      got: `ledger on disk +${(Math.max(...grown) / 1e6).toFixed(3)} MB at most over ${net.all.length} processes, own feed +${(Math.max(...ownGrown) / 1e6).toFixed(3)} MB at most; at most ${Math.max(...proofs.map(p => Math.max(0, ...p.values())))} proof per accused key; attacker keys slashed ${slashedKeys.join('/')} of ${keys.size}`,
      limit: `≤ 1 MB growth per honest node and per own feed; one proof per accused, ever; own proofs ≤ ${PROOF_BUDGET.proofs} and ${PROOF_BUDGET.bytes / 1024} KiB per ${PROOF_BUDGET.windowMs / 60_000} min`
    })
  })
})
