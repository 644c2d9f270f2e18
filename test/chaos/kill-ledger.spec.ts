/**
 * Issue 19 item 3, kills: a process appending to its ledger SIGKILLed mid-write, again and
 * again on the same store (50 kills in the full run, 5 in the suite). After each kill the
 * store is reopened and walked: every entry whose append() had resolved is there, each entry
 * verifies (signature, seq, link to the one before) and the head is the chain's last entry.
 */
import { strict as assert } from 'node:assert'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { equals } from 'uint8arrays/equals'
import { openEntry } from '../../src/ledger/entries/entry.js'
import { LedgerIngest } from '../../src/ledger/ingest/ingest.js'
import { chaosFull, recordFault, tempDir } from '../utils/index.js'

const WRITER = fileURLToPath(new URL('./ledger-writer.js', import.meta.url))

/**
 * Runs the writer until it acknowledged `extra` more entries past `from` (plus a random few), then
 * SIGKILLs it; resolves with the highest acknowledged seq.
 */
async function writeAndKill (path: string, seedHex: string, from: number, extra: number): Promise<number> {
  const child = spawn(process.execPath, [WRITER, path, seedHex], { stdio: ['ignore', 'pipe', 'pipe'] })
  let acked = from
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  const killAt = from + extra
  let killing = false
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) if (/^\d+$/.test(line)) acked = Math.max(acked, Number(line))
      // appends run back to back: a kill a random few ms later lands at a random point of some write
      if (acked >= killAt && !killing) {
        killing = true
        setTimeout(() => { if (child.exitCode == null && child.signalCode == null) child.kill('SIGKILL') }, Math.floor(Math.random() * 6))
      }
    })
    child.once('exit', (code, signal) => { signal === 'SIGKILL' ? resolve() : reject(new Error(`writer exited ${String(code)}: ${stderr}`)) })
  })
  return acked
}

describe('chaos: SIGKILL mid-ledger-write', function () {
  const kills = chaosFull() ? 50 : 5
  this.timeout(60_000 + kills * 10_000)
  let dir: { path: string, cleanup: () => Promise<void> }

  before(async () => { dir = await tempDir('idlegrid-chaos-kill-ledger-') })
  after(async () => { await dir?.cleanup() })

  it(`chaos: ${kills} kills mid-ledger-write lose or corrupt no entry`, async () => {
    const key = await generateKeyPair('Ed25519')
    const peerId = peerIdFromPrivateKey(key)
    const path = join(dir.path, 'ledger')
    const seedHex = Buffer.from(key.raw).toString('hex')
    let acked = 0
    let lost = 0
    let corrupt = 0
    let unacked = 0
    const problems: string[] = []
    for (let round = 0; round < kills; round++) {
      const before = acked
      acked = await writeAndKill(path, seedHex, acked, 3 + Math.floor(Math.random() * 12))
      if (acked <= before) problems.push(`round ${round}: no progress`)
      const ledger = await LedgerIngest.open(path, { privateKey: key, peerId })
      try {
        const head = ledger.store.head(peerId.toString())
        const headSeq = head?.seq ?? 0
        if (headSeq < acked) { lost += acked - headSeq; problems.push(`round ${round}: head ${headSeq} < acknowledged ${acked}`) }
        // written but not yet acknowledged when the kill came: allowed, counted
        unacked += Math.max(0, headSeq - acked)
        const { entries } = await ledger.store.range(peerId.toMultihash().bytes, 1, 100_000)
        let prev: Uint8Array = new Uint8Array(0)
        for (const [i, envelope] of entries.entries()) {
          try {
            const record = await openEntry(envelope)
            if (record.seq !== i + 1 || !equals(record.prevHash, prev)) throw new Error(`seq ${record.seq} at ${i + 1} or broken link`)
            prev = record.hash
          } catch (err: any) {
            corrupt++
            problems.push(`round ${round}: entry ${i + 1}: ${String(err?.message ?? err)}`)
            break
          }
        }
        if (entries.length !== headSeq) problems.push(`round ${round}: ${entries.length} entries stored, head says ${headSeq}`)
        if (head != null && !equals(prev, head.hash)) problems.push(`round ${round}: the head is not the chain's last entry`)
        // the next writer continues from what is stored
        acked = Math.max(acked, headSeq)
      } finally {
        await ledger.close()
      }
    }
    recordFault({
      fault: 'kill',
      checked: `${kills} SIGKILLs mid-ledger-write: every acknowledged entry present, chain verifies`,
      result: problems.length === 0 ? 'ok' : problems[0],
      figure: `${acked} entries, ${lost} lost, ${corrupt} corrupt; ${unacked} written but unacknowledged at the kill`
    })
    assert.deepEqual(problems, [])
    assert.equal(lost, 0)
    assert.equal(corrupt, 0)
  })
})
