import * as assert from 'node:assert/strict'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { lookupFirst, requestOnce, serveOnce, type IdlegridNode } from '../../src/node/index.js'
import { componentsOf, startInProcessNetwork, type InProcessNetwork } from '../utils/index.js'
import { logger } from '@libp2p/logger'
import type { PeerId } from '@libp2p/interface'

// A request to a peer known by id only (a third party holding an award asks its renter for the
// bids audit). libp2p's own dial would look the peer up from inside that dial, and the DHT query
// then dials the peer found, joining the waiting dial: 5 s lost each time. lookupFirst looks the
// peer up before dialing. These specs check which requests look up, and that the answer comes.

const ECHO = '/idlegrid-test/echo/1.0.0'

describe('lookupFirst: a request to a peer known by id only', function () {
  this.timeout(60_000)
  let net: InProcessNetwork
  const asker = (): IdlegridNode => net.renters[1] as IdlegridNode
  const target = (): IdlegridNode => net.renters[0] as IdlegridNode
  const lookups: string[] = []

  const dialer = (): ReturnType<typeof lookupFirst> => {
    const components = componentsOf(asker())
    return lookupFirst({
      connectionManager: components.connectionManager,
      peerStore: components.peerStore,
      peerRouting: {
        findPeer: async (peer, options) => {
          lookups.push(peer.toString())
          return await components.peerRouting.findPeer(peer, options)
        }
      }
    })
  }
  const ask = async (peer: PeerId, signal = AbortSignal.timeout(15_000)): Promise<Uint8Array> =>
    await requestOnce(dialer(), peer, { protocol: ECHO, request: Uint8Array.of(7, 7), maxResponseBytes: 16, signal })

  before(async () => {
    net = await startInProcessNetwork({ providers: 2, renters: 2 })
    const { registrar } = componentsOf(target())
    await serveOnce(registrar, ECHO, async (request) => request, { maxRequestBytes: 16, timeoutMs: 5_000, log: logger('test:echo') })
  })
  after(async () => { await net?.stop() })

  it('looks the peer up before dialing, then the request is answered and its addresses are kept', async () => {
    const peer = target().peerId
    await asker().libp2p.hangUp(peer)
    await asker().libp2p.peerStore.delete(peer)
    lookups.length = 0
    assert.deepEqual([...await ask(peer)], [7, 7])
    assert.deepEqual(lookups, [peer.toString()])
    assert.ok((await asker().libp2p.peerStore.get(peer)).addresses.length > 0)
  })

  it('does not look up a peer it is connected to or holds addresses for', async () => {
    const peer = target().peerId
    lookups.length = 0
    assert.deepEqual([...await ask(peer)], [7, 7])
    await asker().libp2p.hangUp(peer)
    assert.deepEqual([...await ask(peer)], [7, 7])
    assert.deepEqual(lookups, [])
  })

  it('a peer nobody knows: the lookup fails, and the request fails with a typed error', async () => {
    const stranger = peerIdFromPrivateKey(await generateKeyPair('Ed25519'))
    lookups.length = 0
    await assert.rejects(ask(stranger, AbortSignal.timeout(10_000)), (err: any) => err.code === 'ERR_REQUEST_RESPONSE' && err.reason === 'failed')
    assert.deepEqual(lookups, [stranger.toString()])
  })
})
