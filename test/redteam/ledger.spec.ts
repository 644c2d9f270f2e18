/**
 * Red team, the ledger attacks of issue 12, each played by a separate attacker process
 * (attacker.js) whose entries travel over gossip and sync to separate `idlegrid` processes on
 * 127.0.0.1: a bootstrap, two honest providers (process runner) and a renter that `idlegrid
 * submit` runs real jobs through. What each honest process believes is read over its control
 * socket (`reputation`, `ledger.status`, `status`: what the CLI prints). One network for the file.
 */
import * as assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { TOPIC } from '../../protocols/ids.js'
import { callControl } from '../../src/control/client.js'
import { maxDropPerCounterparty } from '../../src/ledger/reputation.js'
import { submitJob } from '../exec/fixtures.js'
import { DEFAULT_PROVIDER_ARGS, recordAttack, startLocalNetwork, tempDir, waitFor, waitForMesh, type LocalNetwork, type NodeProcess } from '../utils/index.js'
import { startAttacker, type AttackerProcess } from './harness.js'

interface Rep { peerId: string, score: number, evidenceScore: number, slashed: boolean, jobs: number, ok: number, broken: number }
interface Status { slashed: string[], diskBytes: number, heads: Array<{ author: string, seq: number, hash: string }>, quarantine: { authors: number, entries: number, bytes: number, evicted: number } }

const reputation = async (n: NodeProcess, peer: string, now: number): Promise<Rep> => ((await callControl(n.dataDir, 'reputation', { peer, now }, { timeoutMs: 10_000 })) as Rep[])[0] as Rep
const ledgerStatus = async (n: NodeProcess): Promise<Status> => await callControl(n.dataDir, 'ledger.status', {}, { timeoutMs: 10_000 }) as Status
const headOf = (s: Status, author: string): { seq: number, hash: string } | undefined => s.heads.find(h => h.author === author)
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
    net = await startLocalNetwork({ baseDir: tmp.path, providers: 2, renters: 1, providerArgs: () => ['--runner', 'process', ...DEFAULT_PROVIDER_ARGS] })
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
      return statuses.every(s => { const h = headOf(s, author); return h != null && h.seq >= seq && (hash == null || h.hash === hash) })
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
      got: `slashed on 0/${net.all.length} processes (${rejects} gossip rejects); victim's score ${(before[0]?.score ?? 0).toFixed(3)} -> ${(after[0]?.score ?? 0).toFixed(3)} on the bootstrap; next honest job ${String(next.status)}`,
      limit: `only equivocation slashes; one renter's BAD_OUTPUT costs <= ${maxDrop.toFixed(3)}`
    })
  })
})
