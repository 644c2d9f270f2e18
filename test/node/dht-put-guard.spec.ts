import * as assert from 'node:assert/strict'
import { logger } from '@libp2p/logger'
import { guardDhtPuts } from '../../src/node/dht-put-guard.js'
import type { KadDHT } from '@libp2p/kad-dht'

describe('node: the DHT put guard', () => {
  it('refuses to install on a kad-dht whose internals it does not know, rather than silently not guarding', () => {
    const rules = { validators: {}, selectors: {}, log: logger('test') }
    assert.throws(() => { guardDhtPuts({} as unknown as KadDHT, rules) }, /kad-dht internals changed/)
    assert.throws(() => { guardDhtPuts({ rpc: { handlers: {} }, contentFetching: { getLocal: async () => {} } } as unknown as KadDHT, rules) }, /kad-dht internals changed/)
  })
})
