/**
 * The answers discovery reads from DHT servers it asks directly (src/capability/discovery/kad-providers.ts):
 * GET_PROVIDERS answers, decoded with the proto's bounds, peer ids parsed (bad ones skipped),
 * addresses cut to MAX_DIAL_ADDRS per peer. Seeds: answers made by the code, with providers,
 * closer peers and their addresses.
 */
import { multiaddr } from '@multiformats/multiaddr'
import { WireDecodeError } from '../../../protocols/codec.js'
import { KadMessage } from '../../../protocols/kad-providers.js'
import { MAX_PROVIDERS_ANSWER_BYTES, parseProvidersAnswer } from '../../../src/capability/discovery/kad-providers.js'
import { MAX_DIAL_ADDRS } from '../../../src/capability/record/record-fetch.js'
import { fixtures } from '../fixtures.js'
import { bytesInput } from '../mutate.js'
import { BoundError, type FuzzTarget, type TargetFactory } from '../target.js'

const providersAnswer: TargetFactory = {
  name: 'dht/providers-answer',
  build: async () => {
    const fx = await fixtures()
    const peer = (id: Uint8Array, port: number): KadMessage.Peer => ({
      id,
      addrs: [multiaddr(`/ip4/127.0.0.1/tcp/${port}`).bytes, multiaddr(`/ip6/::1/tcp/${port}`).bytes]
    })
    const provider = fx.provider.peerId.toMultihash().bytes
    const renter = fx.renter.peerId.toMultihash().bytes
    const seeds = [
      {
        type: KadMessage.MessageType.GET_PROVIDERS,
        key: new Uint8Array(36).fill(1),
        closerPeers: [peer(renter, 4002)],
        providerPeers: [peer(provider, 4001)]
      },
      {
        type: KadMessage.MessageType.GET_PROVIDERS,
        key: new Uint8Array(0),
        closerPeers: [peer(provider, 4001), peer(renter, 4002)],
        providerPeers: []
      }
    ].map(m => KadMessage.encode(m))
    return {
      name: 'dht/providers-answer',
      what: `parseProvidersAnswer: bounded KadMessage (≤ ${MAX_PROVIDERS_ANSWER_BYTES} B), peer ids, ≤ ${MAX_DIAL_ADDRS} addresses a peer`,
      typed: [WireDecodeError],
      arbitrary: bytesInput(seeds, { maxBytes: 4096 }),
      async: false,
      weight: 1,
      run: (input) => {
        const answer = parseProvidersAnswer(input)
        if (answer.providers.length > 256 || answer.closer.length > 64) throw new BoundError('an answer past its peer bounds')
        for (const p of [...answer.providers, ...answer.closer]) {
          if (p.addrs.length > MAX_DIAL_ADDRS) throw new BoundError('a peer with more addresses than are dialled')
        }
      }
    } satisfies FuzzTarget
  }
}

export const kadProvidersTargets: TargetFactory[] = [providersAnswer]
