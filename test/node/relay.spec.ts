/**
 * Circuit relay v2 between real nodes on 127.0.0.1 (src/node/connectivity/relay.ts, issue 37): a node that
 * says it cannot be dialed (`--reachability private`) reserves a slot on its bootstrap's relay
 * and gets a relayed address; a peer reaches it through the relay with TLS end to end (the
 * relay sees ciphertext); on the relay's limited circuit the market's request-response streams
 * run and the job stream does not. And the relay's operator bounds the reservations.
 */
import * as assert from 'node:assert/strict'
import { PROTOCOL } from '../../protocols/ids.js'
import { requestOnce, type IdlegridNode } from '../../src/node/index.js'
import { MAX_RELAYED_PER_PEER } from '../../src/node/connectivity/relay.js'
import { connectionManagerOf, recordAttack, waitFor } from '../utils/index.js'
import { relayedAddress, useLoopbackNodes } from './relay-nodes.js'
import type { Connection } from '@libp2p/interface'
import { lpStream } from 'it-length-prefixed-stream'

describe('node: circuit relay v2 on loopback', function () {
  this.timeout(60_000)
  const { start } = useLoopbackNodes('idlegrid-relay-')

  it('a private node reserves on the bootstrap\'s relay; a peer reaches it through the relay, TLS end to end; request-response runs on the limited circuit, the job stream does not', async () => {
    const seed = await start('bootstrap')
    const bootstrap = [seed.libp2p.getMultiaddrs()[0].toString()]
    // as if behind NAT: no TCP listener at all (on loopback anyone could dial one), reachable through the relay only
    const provider = await start('provider', { bootstrap, reachability: 'private', listen: ['/p2p-circuit'] })
    // the renter too (else the provider could dial it back directly, and the job would take that connection)
    const renter = await start('renter', { bootstrap, reachability: 'private', listen: ['/p2p-circuit'] })
    const via = await waitFor(() => relayedAddress(provider), { timeoutMs: 20_000, what: 'the provider\'s relayed address' })
    assert.ok(via.toString().startsWith(`${bootstrap[0]}/p2p-circuit/p2p/${provider.peerId.toString()}`), via.toString())

    const connection = await renter.libp2p.dial(via, { signal: AbortSignal.timeout(15_000) })
    assert.equal(connection.remotePeer.toString(), provider.peerId.toString(), 'the peer the address names, proven by its key')
    assert.equal(connection.encryption, '/tls/1.0.0', 'TLS between the two peers, over the circuit')
    assert.ok(connection.limits != null, 'the relay bounds the circuit')
    // the provider's capability record over the circuit: a request-response of the market
    const record = await requestOnce(connectionManagerOf(renter), provider.peerId, {
      protocol: PROTOCOL.capability,
      request: new Uint8Array(0),
      maxResponseBytes: 64 * 1024,
      signal: AbortSignal.timeout(10_000)
    })
    assert.ok(record.byteLength > 0, 'the capability record came back over the relay')
    await assert.rejects(renter.libp2p.dialProtocol(provider.peerId, PROTOCOL.job, { signal: AbortSignal.timeout(10_000) }), (err: Error) => err.name === 'LimitedConnectionError', 'no job stream on a limited circuit')
  })

  it('a relay whose operator carries jobs gives circuits with no limit: the job protocol opens on one', async () => {
    const seed = await start('bootstrap', {}, { relay: { unlimited: true } })
    const bootstrap = [seed.libp2p.getMultiaddrs()[0].toString()]
    const provider = await start('provider', { bootstrap, reachability: 'private' })
    const renter = await start('renter', { bootstrap, reachability: 'public' })
    const via = await waitFor(() => relayedAddress(provider), { timeoutMs: 20_000, what: 'the provider\'s relayed address' })
    const connection = await renter.libp2p.dial(via, { signal: AbortSignal.timeout(15_000) })
    assert.equal(connection.limits, undefined)
    const stream = await connection.newStream(PROTOCOL.job, { signal: AbortSignal.timeout(10_000) })
    assert.equal(stream.protocol, PROTOCOL.job)
    stream.abort(new Error('test over'))
  })

  it('red team: reservations past the operator\'s bound are refused (relay.maxReservations)', async () => {
    const seed = await start('bootstrap', {}, { relay: { maxReservations: 1 } })
    const bootstrap = [seed.libp2p.getMultiaddrs()[0].toString()]
    const first = await start('renter', { bootstrap, reachability: 'private' })
    await waitFor(() => relayedAddress(first), { timeoutMs: 20_000, what: 'the first reservation' })
    const second = await start('renter', { bootstrap, reachability: 'private' })
    await waitFor(() => second.libp2p.getConnections(seed.peerId).length > 0, { timeoutMs: 20_000, what: 'the second node connected to the relay' })
    const relay = (
      seed.libp2p.services as unknown as { relay: { reservations: { size: number, has: (p: unknown) => boolean } } }
    ).relay
    // the second asks (its transport reserves on every relay it identifies) and is refused:
    // watched for 3 s after identify, the relay holds the first node's reservation only
    await waitFor(async () => (await seed.libp2p.peerStore.get(second.peerId)).protocols.length > 0, { timeoutMs: 20_000, what: 'identify with the second node' })
    const until = Date.now() + 3_000
    while (Date.now() < until) {
      assert.equal(relay.reservations.size, 1)
      assert.equal(relayedAddress(second), undefined, 'no relayed address for the refused node')
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    assert.ok(relay.reservations.has(first.peerId))
  })
  it('red team: one peer floods a NAT\'d node with circuits through its relay: the circuits it holds are bounded, and an honest peer still reaches the node', async () => {
    const seed = await start('bootstrap')
    const bootstrap = [seed.libp2p.getMultiaddrs()[0].toString()]
    const victim = await start('provider', { bootstrap, reachability: 'private', listen: ['/p2p-circuit'] })
    const attacker = await start('renter', { bootstrap, reachability: 'public' })
    const honest = await start('renter', { bootstrap, reachability: 'public' })
    const via = await waitFor(() => relayedAddress(victim), { timeoutMs: 20_000, what: 'the victim\'s relayed address' })
    // one after another (libp2p joins concurrent dials to one address into one), each a new circuit
    const FLOOD = 100
    let opened = 0
    for (let i = 0; i < FLOOD; i++) {
      await attacker.libp2p.dial(via, { force: true, signal: AbortSignal.timeout(10_000) }).then(
        () => {
          opened++
        },
        () => {}
      )
    }
    const held = victim.libp2p.getConnections(attacker.peerId).filter(c => c.status === 'open' && c.remoteAddr.toString().includes('/p2p-circuit')).length
    const reached = await honest.libp2p.dial(via, { signal: AbortSignal.timeout(15_000) }).then(async c => {
      const record = await requestOnce(connectionManagerOf(honest), victim.peerId, {
        protocol: PROTOCOL.capability,
        request: new Uint8Array(0),
        maxResponseBytes: 64 * 1024,
        signal: AbortSignal.timeout(10_000)
      })
      return c.limits != null && record.byteLength > 0
    }).catch((err: Error) => err.message)
    recordAttack({ issue: '37.5', attack: `${FLOOD} circuits in a row from one peer to a NAT'd node through its relay`, got: `${opened} opened, ${held} held by the victim; an honest peer ${reached === true ? 'still reached it and read its record' : `failed: ${String(reached)}`}`, limit: `at most ${MAX_RELAYED_PER_PEER} relayed connections per remote peer` })
    assert.ok(held <= MAX_RELAYED_PER_PEER, `the victim holds ${held} circuits from one peer`)
    assert.equal(reached, true, 'an honest peer still reaches the victim through the relay')
  })

  it('red team: a relay\'s hourly budget (relay.maxBytesPerHour) bounds all its circuits together: a peer pulling past it is cut, and new circuits are refused until the hour turns', async () => {
    const BUDGET = 2 * 1024 * 1024
    const seed = await start('bootstrap', {}, { relay: { unlimited: true, maxBytesPerHour: BUDGET } })
    const bootstrap = [seed.libp2p.getMultiaddrs()[0].toString()]
    const provider = await start('provider', { bootstrap, reachability: 'private', listen: ['/p2p-circuit'] })
    const renter = await start('renter', { bootstrap, reachability: 'public' })
    const via = await waitFor(() => relayedAddress(provider), { timeoutMs: 20_000, what: 'the provider\'s relayed address' })
    let received = 0
    await provider.libp2p.handle('/idlegrid-test/sink/1.0.0', ({ stream }) => {
      void (async () => { for await (const chunk of stream.source) received += chunk.byteLength })().catch(() => {})
    })
    const connection = await renter.libp2p.dial(via, { signal: AbortSignal.timeout(15_000) })
    assert.equal(connection.limits, undefined, 'an unlimited circuit: only the hourly budget bounds it')
    const stream = await connection.newStream('/idlegrid-test/sink/1.0.0', { signal: AbortSignal.timeout(10_000) })
    const chunk = new Uint8Array(64 * 1024)
    const sent = await stream.sink((async function * () { for (let i = 0; i < 128; i++) yield chunk })()).then(() => 'all 8 MiB sent', (err: Error) => `cut: ${err.message}`)
    await waitFor(() => connection.status !== 'open' || stream.status !== 'open' ? true : undefined, { timeoutMs: 15_000, what: 'the circuit cut' }).catch(() => {})
    const later = await renter.libp2p.dial(via, { force: true, signal: AbortSignal.timeout(10_000) }).then(() => 'a new circuit opened', (err: Error) => `refused: ${err.message}`)
    recordAttack({ issue: '37.3', attack: 'one peer pulls 8 MiB through a relay whose operator allows 2 MiB an hour', got: `${sent}; the node behind the relay received ${received} bytes; then ${later.slice(0, 80)}`, limit: 'relay.maxBytesPerHour, all circuits together' })
    assert.ok(received <= BUDGET, `${received} bytes relayed past a budget of ${BUDGET}`)
    assert.match(later, /^refused/)
  })

  it('red team: an AutoNAT request that comes over a relay is refused (the relay\'s IP would pass for the asker\'s, and the node would dial the relay\'s host); over a direct connection it is answered', async () => {
    const seed = await start('bootstrap', {}, { relay: { unlimited: true } })
    const bootstrap = [seed.libp2p.getMultiaddrs()[0].toString()]
    const provider = await start('provider', { bootstrap, reachability: 'private', listen: ['/p2p-circuit'] })
    const renter = await start('renter', { bootstrap, reachability: 'public' })
    const via = await waitFor(() => relayedAddress(provider), { timeoutMs: 20_000, what: 'the provider\'s relayed address' })
    // Message{type: DIAL, dial: {peer: {id, addrs: [/ip4/11.0.0.9/tcp/4001]}}}, as libp2p's AutoNAT v1 writes it
    const dialRequest = (asker: IdlegridNode): Uint8Array => {
      const ld = (field: number, bytes: Uint8Array): number[] => [(field << 3) | 2, bytes.length, ...bytes]
      const addr = Uint8Array.from([0x04, 11, 0, 0, 9, 0x06, 0x0f, 0xa1])
      const peerInfo = Uint8Array.from([...ld(1, asker.peerId.toMultihash().bytes), ...ld(2, addr)])
      return Uint8Array.from([0x08, 0x00, ...ld(2, Uint8Array.from(ld(1, peerInfo)))])
    }
    const ask = async (connection: Connection): Promise<string> => {
      try {
        const frames = lpStream(await connection.newStream(PROTOCOL.autonat, { signal: AbortSignal.timeout(10_000) }))
        await frames.write(dialRequest(renter), { signal: AbortSignal.timeout(10_000) })
        const answer = (await frames.read({ signal: AbortSignal.timeout(10_000) })).subarray()
        return answer[0] === 0x08 && answer[1] === 0x01 ? 'answered' : `answer ${Buffer.from(answer).toString('hex')}`
      } catch (err: any) {
        return `refused: ${String(err?.name ?? err)}`
      }
    }
    const relayed = await renter.libp2p.dial(via, { signal: AbortSignal.timeout(15_000) })
    assert.equal(relayed.limits, undefined, 'an unlimited circuit: the AutoNAT stream itself opens on it')
    const overRelay = await ask(relayed)
    const direct = await renter.libp2p.dial(seed.libp2p.getMultiaddrs()[0], { signal: AbortSignal.timeout(15_000) })
    const overDirect = await ask(direct)
    recordAttack({ issue: '37.5', attack: 'an AutoNAT dial-back request over an unlimited relay (it would name the relay\'s host as the asker\'s)', got: `over the relay: ${overRelay}; over a direct connection: ${overDirect}`, limit: 'answered on direct connections only' })
    assert.match(overRelay, /^refused/)
    assert.equal(overDirect, 'answered')
  })
})
