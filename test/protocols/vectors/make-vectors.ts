/**
 * Writes protocols/vectors/*.json from fixed seeds and fixed times (`npm run vectors`); the
 * vectors spec checks that the committed files equal what this produces.
 */

import { writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { makeEnvelopes } from './make-envelopes.js'
import { makeGossip } from './make-gossip.js'
import { makeFraudProofs, makeLedger, makeSync } from './make-ledger.js'
import { makeCapability, makeJobFrames } from './make-records.js'
import { makeMarketAnswers } from './make-market-answers.js'
import { makeBidsAudit } from './make-bids-audit.js'
import type { VectorFile } from './format.js'

/** protocols/vectors, from dist/test/protocols/vectors or test/protocols/vectors alike. */
export const VECTORS_DIR = join(dirname(fileURLToPath(import.meta.url)), ...(import.meta.url.includes('/dist/') ? ['..', '..', '..', '..'] : ['..', '..', '..']), 'protocols', 'vectors')

export const VECTOR_FILES = ['envelopes', 'gossip', 'capability', 'job-frames', 'ledger', 'fraud-proofs', 'sync', 'market-answers', 'bids-audit'] as const

export async function makeVectorFiles (): Promise<Record<typeof VECTOR_FILES[number], VectorFile>> {
  return {
    envelopes: await makeEnvelopes(),
    gossip: await makeGossip(),
    capability: await makeCapability(),
    'job-frames': await makeJobFrames(),
    ledger: await makeLedger(),
    'fraud-proofs': await makeFraudProofs(),
    sync: await makeSync(),
    'market-answers': await makeMarketAnswers(),
    'bids-audit': await makeBidsAudit()
  }
}

export function vectorJson (file: VectorFile): string {
  return JSON.stringify(file, null, 2) + '\n'
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = await makeVectorFiles()
  for (const name of VECTOR_FILES) {
    await writeFile(join(VECTORS_DIR, `${name}.json`), vectorJson(files[name]))
    process.stdout.write(`protocols/vectors/${name}.json: ${files[name].vectors.length} vectors\n`)
  }
}
