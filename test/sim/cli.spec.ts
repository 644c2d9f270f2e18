import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import * as assert from 'node:assert/strict'
import { BIN_PATH, tempDir } from '../utils/index.js'
import { NODE_HEADER, POD_HEADER, mixedNodes, mixedPods } from './fixtures.js'

const BIN = BIN_PATH

async function sim (args: string[]): Promise<{ code: number, stdout: string, stderr: string }> {
  return await new Promise(resolve => {
    execFile(process.execPath, [BIN, 'sim', ...args], { timeout: 60_000 }, (err: any, stdout, stderr) => {
      resolve({ code: err == null ? 0 : Number(err.code ?? 1), stdout, stderr })
    })
  })
}

describe('sim: the idlegrid sim command', function () {
  this.timeout(60_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  beforeEach(async () => { dir = await tempDir('idlegrid-sim-cli-') })
  afterEach(async () => { await dir.cleanup() })

  it('runs a tiny scenario, prints the report as JSON and writes the page and SVG figures', async () => {
    await writeFile(join(dir.path, 'nodes.csv'), [NODE_HEADER, ...mixedNodes(8)].join('\n'))
    await writeFile(join(dir.path, 'pods.csv'), [POD_HEADER, ...mixedPods(200)].join('\n'))
    await writeFile(join(dir.path, 's.yaml'), 'name: smoke\ntrace: { nodes: nodes.csv, tasks: pods.csv }\npopulation: { owners: 3, renters: 4 }\n')
    const out = join(dir.path, 'out')
    const { code, stdout, stderr } = await sim([join(dir.path, 's.yaml'), '--seed', '3', '--out', out, '--json'])
    assert.equal(code, 0, stderr)
    const report = JSON.parse(stdout.trim().split('\n')[0] as string)
    assert.deepEqual({ name: report.scenario.name, seed: report.scenario.seed }, { name: 'smoke', seed: 3 })
    assert.equal(report.claims.length, 5)
    const md = await readFile(join(out, 'report.md'), 'utf8')
    assert.ok(md.includes('## Market vs baseline, by tier'))
    const svg = await readFile(join(out, 'utilisation.svg'), 'utf8')
    assert.equal(svg.startsWith('<svg'), true)
    assert.deepEqual(JSON.parse(await readFile(join(out, 'report.json'), 'utf8')), report)
  })

  it('refuses a bad scenario with the field named, and a missing trace file, with exit code 2', async () => {
    await writeFile(join(dir.path, 'bad.yaml'), 'trace: { nodes: n.csv, tasks: p.csv }\nmarket: { candidates: 0 }\n')
    const bad = await sim([join(dir.path, 'bad.yaml')])
    assert.equal(bad.code, 2)
    assert.ok(bad.stderr.includes('market.candidates'))
    await writeFile(join(dir.path, 'missing.yaml'), 'trace: { nodes: n.csv, tasks: p.csv }\n')
    const missing = await sim([join(dir.path, 'missing.yaml')])
    assert.equal(missing.code, 2)
    assert.ok(missing.stderr.includes('cannot read trace file'))
  })
})
