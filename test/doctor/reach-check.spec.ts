/**
 * `idlegrid doctor`'s reachability line (src/doctor/reach-check.ts, issue 37 item 2): from a
 * running node's status, or from the config when none runs, with the fix where there is one.
 */
import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { resolveConfig } from '../../src/config/index.js'
import { checkReachability, judgeConfig, judgeStatus } from '../../src/doctor/reach-check.js'
import type { DirectPathStatus } from '../../src/node/index.js'

const path = (over: Partial<DirectPathStatus> = {}): DirectPathStatus => ({ seenAt: [], mapping: 'unknown', asked: { direct: 0, failed: 0 }, served: { direct: 0, failed: 0, refused: 0 }, ...over })

describe('doctor: reachability', () => {
  let seed: string
  before(async () => {
    seed = `/ip4/11.0.0.10/tcp/4001/p2p/${peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString()}`
  })
  const config = (flags: Record<string, unknown>): ReturnType<typeof resolveConfig> => resolveConfig({ role: 'provider', flags: { dataDir: '/tmp/idlegrid-doctor-reach', bootstrap: [seed], ...flags } })

  it('from the config: a home node behind NAT is reachable only through relays, and told how to be dialed directly', () => {
    const result = judgeConfig(config({ listen: ['/ip4/0.0.0.0/tcp/4001'] }), ['127.0.0.1', '192.168.1.10'])
    assert.equal(result.status, 'warn')
    assert.match(result.detail, /reachable only through them/)
    assert.match(result.fix ?? '', /forward a TCP port .* --announce/)
  })

  it('from the config: an announced address, a public interface, a local network', () => {
    assert.equal(judgeConfig(config({ listen: ['/ip4/0.0.0.0/tcp/4001'], announce: ['/ip4/11.0.0.20/tcp/4001'] }), ['192.168.1.10']).status, 'ok')
    assert.match(judgeConfig(config({ listen: ['/ip4/0.0.0.0/tcp/4001'] }), ['11.0.0.21']).detail, /public address/)
    const local = resolveConfig({ role: 'provider', flags: { dataDir: '/tmp/idlegrid-doctor-reach', listen: ['/ip4/127.0.0.1/tcp/0'] } })
    assert.match(judgeConfig(local).detail, /local network/)
  })

  it('from a running node: directly, only through relays (with where its dial port was seen), not at all', () => {
    assert.equal(judgeStatus({ reachability: { how: 'direct', addrs: ['/ip4/11.0.0.20/tcp/4001'] }, directPath: path() }).status, 'ok')
    assert.match(judgeStatus({ reachability: { how: 'direct', via: 'upnp', addrs: ['/ip4/11.0.0.20/tcp/4001'] }, directPath: path() }).detail, /port mapping the router made \(UPnP\)/)
    assert.match(judgeStatus({ reachability: { how: 'direct', via: 'autonat', addrs: ['/ip4/11.0.0.20/tcp/4001'] }, directPath: path() }).detail, /a peer that dialed it back \(AutoNAT\)/)
    const relayed = judgeStatus({ reachability: { how: 'relayed', addrs: ['/ip4/11.0.0.10/tcp/4001/p2p/x/p2p-circuit'] }, directPath: path({ dialPort: 40123, seenAt: ['/ip4/11.0.0.101/tcp/40123'], mapping: 'endpoint-independent' }) })
    assert.equal(relayed.status, 'warn')
    assert.match(relayed.detail, /only through relays .* port 40123, seen at \/ip4\/11\.0\.0\.101\/tcp\/40123 \(NAT mapping: endpoint-independent\)/)
    const symmetric = judgeStatus({ reachability: { how: 'relayed', addrs: ['a'] }, directPath: path({ dialPort: 40123, seenAt: ['/ip4/11.0.0.101/tcp/5555', '/ip4/11.0.0.101/tcp/6666'], mapping: 'endpoint-dependent' }) })
    assert.match(symmetric.detail, /no hole punch through this NAT/)
    const none = judgeStatus({ reachability: { how: 'unreachable', addrs: [], advice: 'check the bootstrap' }, directPath: path() })
    assert.equal(none.status, 'fail')
    assert.equal(none.fix, 'check the bootstrap')
  })

  it('with no node running on the data directory, the config is judged', async () => {
    const result = await checkReachability(config({ listen: ['/ip4/0.0.0.0/tcp/4001'], announce: ['/ip4/11.0.0.20/tcp/4001'] }), true)
    assert.equal(result.status, 'ok', 'no control socket: the config says it announces a public address')
  })
})
