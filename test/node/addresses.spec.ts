/**
 * The addresses a node puts in its messages and how it says it is reached (src/node/connectivity/addresses.ts,
 * issue 37): behind NAT only public or relayed addresses go out, never the LAN's; on a local
 * network everything does, as before.
 */
import * as assert from 'node:assert/strict'
import { multiaddr } from '@multiformats/multiaddr'
import { messageAddresses, reachabilityOf, recordAddresses, untilReachable } from '../../src/node/connectivity/addresses.js'

const SELF = '12D3KooWBmjaYnbJ1KeBicXLQjUD1ZzM1z7V5AgiA4Lf4ShXsMm8'
const RELAY = '12D3KooWLHku2egFfAE73cBuVUdrZRZUCNyWF18DD2k1ZqmrwGog'
const lan = multiaddr(`/ip4/192.168.1.10/tcp/4001/p2p/${SELF}`)
const loop = multiaddr(`/ip4/127.0.0.1/tcp/4001/p2p/${SELF}`)
const relayed = multiaddr(`/ip4/11.0.0.10/tcp/4001/p2p/${RELAY}/p2p-circuit/p2p/${SELF}`)
const pub = multiaddr(`/ip4/11.0.0.20/tcp/4001/p2p/${SELF}`)
const text = (bytes: Uint8Array[]): string[] => bytes.map(b => multiaddr(b).toString())

describe('node: message addresses and reachability', () => {
  it('behind NAT: only the relayed address goes out, without our id and with the relay\'s', () => {
    assert.deepEqual(text(messageAddresses([loop, lan, relayed])), [`/ip4/11.0.0.10/tcp/4001/p2p/${RELAY}/p2p-circuit`])
  })

  it('public: the public address first, then relayed ones; never the LAN\'s', () => {
    assert.deepEqual(text(messageAddresses([lan, relayed, pub])), ['/ip4/11.0.0.20/tcp/4001', `/ip4/11.0.0.10/tcp/4001/p2p/${RELAY}/p2p-circuit`])
  })

  it('on a local network every address goes out, at most 4, none over 64 bytes', () => {
    assert.deepEqual(text(messageAddresses([loop, lan])), ['/ip4/127.0.0.1/tcp/4001', '/ip4/192.168.1.10/tcp/4001'])
    const many = Array.from({ length: 6 }, (_, i) => multiaddr(`/ip4/10.0.0.${i + 1}/tcp/4001`))
    assert.equal(messageAddresses(many).length, 4)
    const long = multiaddr(`/dns4/${'a'.repeat(70)}.example/tcp/4001`)
    assert.deepEqual(messageAddresses([long]), [])
  })

  it('says how the node is reached, with the fix where there is one', () => {
    assert.equal(reachabilityOf([loop, lan], true).how, 'local')
    assert.equal(reachabilityOf([lan, pub], false).how, 'direct')
    const viaRelay = reachabilityOf([loop, lan, relayed], false)
    assert.equal(viaRelay.how, 'relayed')
    assert.deepEqual(viaRelay.addrs, [relayed.toString()])
    assert.match(viaRelay.advice ?? '', /only through relays/)
    const alone = reachabilityOf([loop, lan], false)
    assert.equal(alone.how, 'unreachable')
    assert.match(alone.advice ?? '', /relay/)
  })

  it('a renter behind NAT waits for its relay slot before it names addresses: yes once it comes, no when it does not in time or the auction ends', async () => {
    let addrs = [loop, lan]
    setTimeout(() => { addrs = [loop, lan, relayed] }, 150)
    assert.equal(await untilReachable(() => addrs, AbortSignal.timeout(5_000), 5_000), true)
    assert.equal(await untilReachable(() => [loop, lan], AbortSignal.timeout(5_000), 250), false)
    // the abort ends the wait (or mocha's 2 s timeout fails the spec)
    assert.equal(await untilReachable(() => [loop, lan], AbortSignal.timeout(200), 60_000), false)
    assert.equal(await untilReachable(() => [pub], AbortSignal.abort(), 0), true)
  })

  it('a public address says how it is known to work: mapped by the router (UPnP), dialed back by a peer (AutoNAT), or announced by the operator', () => {
    assert.equal(reachabilityOf([lan, pub], false, [pub]).via, 'upnp')
    assert.equal(reachabilityOf([lan, pub], false, [], [pub]).via, 'autonat')
    assert.equal(reachabilityOf([lan, pub], false).via, undefined)
    assert.equal(reachabilityOf([lan, pub], false).how, 'direct')
  })

  it('a capability record names a NAT\'d provider\'s relayed address, never its LAN\'s; on a local network its TCP addresses as before; never a WebSocket one', () => {
    const ws = multiaddr(`/ip4/11.0.0.20/tcp/4002/ws/p2p/${SELF}`)
    assert.deepEqual(text(recordAddresses([loop, lan, relayed])), [`/ip4/11.0.0.10/tcp/4001/p2p/${RELAY}/p2p-circuit`])
    assert.deepEqual(text(recordAddresses([loop, lan])), ['/ip4/127.0.0.1/tcp/4001', '/ip4/192.168.1.10/tcp/4001'])
    assert.deepEqual(text(recordAddresses([lan, pub, ws, relayed])), ['/ip4/11.0.0.20/tcp/4001', `/ip4/11.0.0.10/tcp/4001/p2p/${RELAY}/p2p-circuit`])
  })
})
