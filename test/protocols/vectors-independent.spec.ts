/**
 * Every conformance vector re-checked without our codec or signature code (protobufjs and
 * node:crypto, vectors/independent.ts): the same verdict wherever bytes, schema and
 * Ed25519 decide, and the same decoded meaning wherever the message decodes. This is what
 * shows protocols/ specifies the wire and our codec does not.
 */

import * as assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { recordAttack } from '../utils/index.js'
import { checkIndependently, loadSchema } from './vectors/independent.js'
import { VECTOR_FILES, VECTORS_DIR } from './vectors/make-vectors.js'
import type { VectorFile, VectorStage } from './vectors/format.js'

/** the stages the independent checker decides; 'rule' needs the message's own rules */
const WIRE_STAGES: ReadonlySet<VectorStage> = new Set(['size', 'decode', 'domain', 'signer', 'signature'])

describe('conformance vectors, checked independently (protobufjs + node:crypto)', () => {
  const root = loadSchema(join(VECTORS_DIR, '..'))

  for (const name of VECTOR_FILES) {
    it(`${name}.json: same wire verdict and decoded meaning`, async () => {
      const file = JSON.parse(await readFile(join(VECTORS_DIR, `${name}.json`), 'utf8')) as VectorFile
      let decided = 0
      for (const vector of file.vectors) {
        const id = `${name}/${vector.name}`
        const got = checkIndependently(root, vector)
        if (vector.stage != null && WIRE_STAGES.has(vector.stage)) {
          decided++
          assert.equal(got.stage, vector.stage, `${id}: refused at stage ${vector.stage} (${vector.reason}); independently: ${got.stage ?? 'accepted'} ${got.why ?? ''}`)
          continue
        }
        assert.equal(got.stage, undefined, `${id}: passes every wire check; independently refused at ${got.stage}: ${got.why}`)
        assert.deepEqual(got.decoded, vector.decoded, `${id}: decoded meaning`)
      }
      if (name === 'envelopes') assert.ok(decided >= 10, 'the envelope file is mostly wire rejections')
    })
  }

  it('red team: small-order keys and S >= L are refused although OpenSSL accepts small-order keys', async () => {
    const file = JSON.parse(await readFile(join(VECTORS_DIR, 'envelopes.json'), 'utf8')) as VectorFile
    const tricky = file.vectors.filter(v => v.name.startsWith('small-order') || v.name === 'non-canonical-s')
    assert.equal(tricky.length, 3)
    for (const v of tricky) assert.deepEqual({ verdict: v.verdict, stage: v.stage }, { verdict: 'reject', stage: 'signature' }, v.name)
    const refused = tricky.filter(v => checkIndependently(root, v).stage === 'signature')
    recordAttack({ issue: '14.6', attack: 'envelopes signed with small-order keys (OpenSSL alone accepts them) and with S + L', got: `${tricky.length - refused.length} of ${tricky.length} accepted by the strict rule (our verifier: vectors.spec)`, limit: 'RFC 8032 strict: S < L, small-order keys refused' })
    assert.equal(refused.length, tricky.length)
  })
})
