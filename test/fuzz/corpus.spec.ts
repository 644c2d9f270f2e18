/**
 * Every input that ever broke a target (test/fuzz/corpus/<target>/*.hex, kept by `npm run fuzz`
 * and by hand) replayed through its target: each must now be accepted or refused with one of
 * the target's typed errors, promptly.
 */
import * as assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { replayInput } from './engine.js'
import { targetByName } from './targets/index.js'
import { repoRoot } from './vectors.js'

const CORPUS = join(repoRoot(), 'test', 'fuzz', 'corpus')
const dirs = existsSync(CORPUS)
  ? readdirSync(CORPUS, { withFileTypes: true })
    .filter(d => d.isDirectory())
    .map(d => d.name)
  : []

describe('fuzz corpus: inputs that once broke something stay fixed', function () {
  this.timeout(60_000)

  it('the corpus holds kept inputs for known targets', () => {
    assert.ok(dirs.length > 0, `no corpus under ${CORPUS}`)
    for (const dir of dirs) targetByName(dir.replace(/__/g, '/'))
  })

  for (const dir of dirs) {
    const files = readdirSync(join(CORPUS, dir)).filter(f => f.endsWith('.hex')).sort()
    it(`${dir.replace(/__/g, '/')}: ${files.length} kept inputs replay without a crash or hang`, async () => {
      const target = await targetByName(dir.replace(/__/g, '/')).build()
      try {
        for (const file of files) {
          const input = new Uint8Array(Buffer.from(readFileSync(join(CORPUS, dir, file), 'utf8').trim(), 'hex'))
          try {
            await replayInput(target, input, 5_000)
          } catch (err: any) {
            assert.fail(`${dir}/${file} still breaks the target: ${String(err?.name)}: ${String(err?.message)}`)
          }
        }
      } finally {
        await target.close?.()
      }
    })
  }
})
