#!/usr/bin/env node
// A small batch-scoring workload: scores every row of inputs/<data>.csv with the logistic
// model in inputs/model.json and writes outputs/scores.csv and outputs/summary.json.
// Each row's features are first mixed through `rounds` sha256 rounds (feature hashing), so
// the job does real, deterministic CPU work that a renter can recompute and check.
// On SIGTERM (preemption) it saves outputs/checkpoint.json and the rows scored so far, and a
// later run given them under inputs/checkpoint/ resumes where it stopped.
// Runs on any Node >= 18 with no dependencies. Usage: node batch-score.mjs DATA.csv [MODEL.json]
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const inputDir = process.env.IDLEGRID_INPUT_DIR ?? 'inputs'
const outputDir = process.env.IDLEGRID_OUTPUT_DIR ?? 'outputs'
const dataFile = process.argv[2] ?? 'data.csv'
const modelFile = process.argv[3] ?? 'model.json'
mkdirSync(outputDir, { recursive: true })

const model = JSON.parse(readFileSync(join(inputDir, modelFile), 'utf8'))
const [header, ...lines] = readFileSync(join(inputDir, dataFile), 'utf8').trim().split('\n')
const columns = header.split(',')
const rows = lines.map(line => {
  const cells = line.split(',')
  return { id: cells[0], features: cells.slice(1).map(Number) }
})
if (columns.length - 1 !== model.weights.length) throw new Error(`model has ${model.weights.length} weights, data has ${columns.length - 1} features`)

export function scoreRow (features, m) {
  let digest = Buffer.from(features.join(','))
  for (let i = 0; i < m.rounds; i++) digest = createHash('sha256').update(digest).digest()
  const hashed = digest[0] / 255 - 0.5 // a hashed interaction feature in [-0.5, 0.5]
  const z = m.bias + m.hashWeight * hashed + features.reduce((sum, x, i) => sum + x * m.weights[i], 0)
  return 1 / (1 + Math.exp(-z))
}

let start = 0
let scored = []
const checkpointFile = join(inputDir, 'checkpoint', 'checkpoint.json')
if (existsSync(checkpointFile)) {
  const checkpoint = JSON.parse(readFileSync(checkpointFile, 'utf8'))
  scored = checkpoint.scored
  start = checkpoint.nextRow
  console.log(`resuming from checkpoint at row ${start}/${rows.length}`)
}

let stopping = false
process.on('SIGTERM', () => { stopping = true })

function saveCheckpoint (nextRow) {
  writeFileSync(join(outputDir, 'checkpoint.json'), JSON.stringify({ nextRow, scored }))
}

const step = Math.max(1, Math.floor(rows.length / 10))
// a SIGTERM is seen only when the loop yields: every 50 ms, so the checkpoint is written well
// within the notice even on a slow or busy machine (one log step of rows can take seconds)
const YIELD_MS = 50
let yielded = performance.now()
for (let i = start; i < rows.length; i++) {
  if (stopping) {
    saveCheckpoint(i)
    console.log(`preempted: checkpoint saved at row ${i}/${rows.length}`)
    process.exit(143)
  }
  scored.push(Number(scoreRow(rows[i].features, model).toFixed(6)))
  if ((i + 1) % step === 0) console.log(`scored ${i + 1}/${rows.length} rows`)
  if (performance.now() - yielded >= YIELD_MS) {
    await new Promise(resolve => setImmediate(resolve))
    yielded = performance.now()
  }
}

const csv = ['id,score', ...rows.map((r, i) => `${r.id},${scored[i].toFixed(6)}`)].join('\n') + '\n'
writeFileSync(join(outputDir, 'scores.csv'), csv)
const approved = scored.filter(s => s >= model.threshold).length
const summary = {
  rows: rows.length,
  approved,
  meanScore: Number((scored.reduce((a, b) => a + b, 0) / rows.length).toFixed(6)),
  scoresSha256: createHash('sha256').update(csv).digest('hex'),
  resumedAt: start
}
writeFileSync(join(outputDir, 'summary.json'), JSON.stringify(summary, null, 2) + '\n')
console.log(`done: ${rows.length} rows, ${approved} approved, mean score ${summary.meanScore}`)
