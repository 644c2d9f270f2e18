/**
 * The TCP transport and native TLS encrypter (src/transport/) between real libp2p nodes on
 * 127.0.0.1: with themselves, with stock @libp2p/tcp + @libp2p/tls peers and with noise-only
 * peers, both ways; a dialer that sends its TLS bytes ahead of the answer (the stream encrypter
 * takes over); and what the worst peer could send before and during the handshake. The listener
 * must close each such socket and still serve the next honest dialer.
 */
import * as assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect as netConnect, createServer, type Socket } from 'node:net'
import { connect as tlsConnect, createSecureContext, createServer as createTlsServer, TLSSocket } from 'node:tls'
import { createPrivateKey, webcrypto } from 'node:crypto'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { tcp } from '@libp2p/tcp'
import { tls } from '@libp2p/tls'
import { webSockets } from '@libp2p/websockets'
import { multiaddr } from '@multiformats/multiaddr'
import * as x509 from '@peculiar/x509'
import { createLibp2p, type Libp2p } from 'libp2p'
import { createCertificate, verifyPeerCertificate } from '../../src/transport/certificate.js'
import { connectionEncrypters } from '../../src/transport/index.js'
import { nativeTls, nativeTlsStats, tlsContext } from '../../src/transport/native-tls.js'
import { TLS_PROTOCOL } from '../../src/transport/secure.js'
import * as varint from 'uint8-varint'
import { join } from 'node:path'
import { Duplex } from 'node:stream'
import { tlsTcp } from '../../src/transport/tls-tcp.js'
import { recordAttack, spawnNode, tempDir, waitFor } from '../utils/index.js'
import type { ConnectionGater, PeerId, PrivateKey } from '@libp2p/interface'

const ECHO = '/test/echo/1.0.0'
const MULTISTREAM = '/multistream/1.0.0'

/** A multistream-select message: uvarint length, text, newline. */
function encodeMessage (text: string): Buffer {
  const body = Buffer.from(`${text}\n`)
  return Buffer.concat([Buffer.from(varint.encode(body.length)), body])
}
/** the nodes' inbound upgrade timeout, which closes any socket that is still negotiating */
const UPGRADE_TIMEOUT_MS = 2_000
/** a socket the listener must close for what it sent, not for the timeout, is closed within this */
const EARLY_MS = 1_500

type Kind = 'native' | 'stock-tls' | 'stock-noise'

async function node (kind: Kind, gater?: ConnectionGater): Promise<Libp2p> {
  const n = await createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [kind === 'native' ? tlsTcp() : tcp()],
    connectionEncrypters: kind === 'stock-noise' ? [noise()] : kind === 'native' ? connectionEncrypters() : [tls(), noise()],
    streamMuxers: [yamux()],
    connectionManager: { inboundUpgradeTimeout: UPGRADE_TIMEOUT_MS },
    ...(gater != null ? { connectionGater: gater } : {})
  })
  await n.handle(ECHO, async ({ stream }) => { await stream.sink(stream.source) })
  return n
}

/** 1 MiB through an echo stream, compared byte for byte. */
async function echoes (from: Libp2p, to: Libp2p): Promise<void> {
  const payload = Buffer.alloc(1024 * 1024)
  for (let i = 0; i < payload.length; i++) payload[i] = (i * 7919) & 0xff
  const stream = await from.dialProtocol(to.getMultiaddrs()[0], ECHO)
  const received: Buffer[] = []
  await Promise.all([
    stream.sink(
      (function * () {
        for (let at = 0; at < payload.length; at += 65_536) yield payload.subarray(at, at + 65_536)
      })()
    ),
    (async () => {
      for await (const chunk of stream.source) received.push(Buffer.from(chunk.subarray()))
    })()
  ])
  assert.ok(Buffer.concat(received).equals(payload), 'the echo differs from what was sent')
}

/** A raw TCP client to `n`'s listener; resolves with all it read once the listener closes it. */
async function rawSession (
  n: Libp2p,
  talk: (socket: Socket) => void,
  timeoutMs = 5_000
): Promise<{ read: Buffer, closedByPeer: boolean }> {
  const { host, port } = n.getMultiaddrs()[0].toOptions()
  const socket = netConnect({ host, port })
  const chunks: Buffer[] = []
  socket.on('data', c => chunks.push(c))
  socket.on('error', () => {})
  await new Promise(resolve => socket.once('connect', resolve))
  talk(socket)
  const closedByPeer = await new Promise<boolean>(resolve => {
    const timer = setTimeout(() => { resolve(false) }, timeoutMs)
    socket.once('close', () => { clearTimeout(timer); resolve(true) })
  })
  socket.destroy()
  return { read: Buffer.concat(chunks), closedByPeer }
}

describe('native-TLS TCP transport', function () {
  this.timeout(30_000)
  const started: Libp2p[] = []
  const start = async (kind: Kind, gater?: ConnectionGater): Promise<Libp2p> => {
    const n = await node(kind, gater)
    started.push(n)
    return n
  }
  afterEach(async () => { await Promise.all(started.splice(0).map(async n => { await n.stop() })) })

  describe('connects', () => {
    it('two nodes of its own, TLS done natively and yamux chosen in the handshake', async () => {
      const [a, b] = [await start('native'), await start('native')]
      const before = { ...nativeTlsStats }
      const conn = await a.dial(b.getMultiaddrs()[0])
      assert.equal(conn.encryption, TLS_PROTOCOL)
      assert.equal(conn.multiplexer, '/yamux/1.0.0')
      await waitFor(() => nativeTlsStats.native === before.native + 2, { timeoutMs: 5_000, what: 'both ends to run TLS on the socket' })
      assert.equal(nativeTlsStats.stream, before.stream, 'a handshake went through the JS stream')
      await echoes(a, b)
      await echoes(b, a)
      await conn.close()
      await waitFor(() => b.getConnections(a.peerId).length === 0, { timeoutMs: 5_000, what: 'the listener to see the connection closed' })
    })

    for (const kind of ['stock-tls', 'stock-noise'] as const) {
      it(`to a ${kind} peer, and that peer to it`, async () => {
        const ours = await start('native')
        const theirs = await start(kind)
        const out = await ours.dial(theirs.getMultiaddrs()[0])
        assert.equal(out.remotePeer.toString(), theirs.peerId.toString())
        await echoes(ours, theirs)
        await out.close()
        await waitFor(() => theirs.getConnections(ours.peerId).length === 0, { timeoutMs: 5_000, what: 'the peer to see the connection closed' })
        const back = await theirs.dial(ours.getMultiaddrs()[0])
        assert.equal(back.encryption, kind === 'stock-tls' ? TLS_PROTOCOL : '/noise')
        await echoes(theirs, ours)
        await echoes(ours, theirs)
      })
    }
  })

  it('a dialer whose TLS bytes come with its proposal: libp2p holds them, and TLS runs over the stream', async () => {
    const n = await start('native')
    const before = { ...nativeTlsStats }
    const identity = await generateKeyPair('Ed25519')
    const { cert, key } = await createCertificate(identity)
    const { host, port } = n.getMultiaddrs()[0].toOptions()
    const tcpSocket = netConnect({ host, port })
    tcpSocket.on('error', () => {})
    await new Promise(resolve => tcpSocket.once('connect', resolve))
    // the negotiation goes out in the same write as the ClientHello, and its answer is cut
    // from what comes back before TLS reads it
    const prefix = Buffer.concat([encodeMessage(MULTISTREAM), encodeMessage(TLS_PROTOCOL)])
    let sent = false
    let answer = prefix.length
    const lazy = new Duplex({
      write (chunk: Buffer, _enc, done) {
        tcpSocket.write(sent ? chunk : Buffer.concat([prefix, chunk]))
        sent = true
        done()
      },
      read () {}
    })
    tcpSocket.on('data', (chunk: Buffer) => {
      const cut = Math.min(answer, chunk.length)
      answer -= cut
      if (chunk.length > cut) lazy.push(chunk.subarray(cut))
    })
    const client = tlsConnect({ socket: lazy, cert, key, rejectUnauthorized: false, minVersion: 'TLSv1.3', ALPNProtocols: ['/yamux/1.0.0', 'libp2p'] })
    client.on('error', () => {})
    await new Promise(resolve => client.once('secureConnect', resolve))
    const proven = await verifyPeerCertificate(new Uint8Array(client.getPeerCertificate().raw))
    assert.equal(proven.toString(), n.peerId.toString())
    assert.equal(client.alpnProtocol, '/yamux/1.0.0')
    await waitFor(() => nativeTlsStats.stream === before.stream + 1, { timeoutMs: 5_000, what: 'the listener to run TLS over the stream' })
    assert.equal(nativeTlsStats.native, before.native)
    client.destroy()
    tcpSocket.destroy()
  })

  it('over WebSockets (a bootstrap node) the same encrypter runs TLS over the stream', async () => {
    const seed = await createLibp2p({
      addresses: { listen: ['/ip4/127.0.0.1/tcp/0/ws'] },
      transports: [tlsTcp(), webSockets()],
      connectionEncrypters: [nativeTls()],
      streamMuxers: [yamux()]
    })
    started.push(seed)
    await seed.handle(ECHO, async ({ stream }) => { await stream.sink(stream.source) })
    const client = await createLibp2p({
      transports: [webSockets()],
      connectionEncrypters: [tls()],
      streamMuxers: [yamux()]
    })
    started.push(client)
    const before = { ...nativeTlsStats }
    const ws = seed.getMultiaddrs().find(a => a.toString().includes('/ws'))
    assert.ok(ws != null)
    const conn = await client.dial(ws)
    assert.equal(conn.encryption, TLS_PROTOCOL)
    await echoes(client, seed)
    assert.equal(nativeTlsStats.stream, before.stream + 1)
    assert.equal(nativeTlsStats.native, before.native)
  })

  describe('refuses', () => {
    it('a listener whose certificate proves another peer than the address names', async () => {
      const [a, b] = [await start('native'), await start('native')]
      const other = peerIdFromPrivateKey(await generateKeyPair('Ed25519'))
      const { host, port } = b.getMultiaddrs()[0].toOptions()
      await assert.rejects(a.dial(multiaddr(`/ip4/${host}/tcp/${port}/p2p/${other.toString()}`)))
      assert.equal(a.getConnections(b.peerId).length, 0)
      await echoes(a, b)
    })

    it('a listener that speaks only noise and proves another peer than the address names', async () => {
      const [a, b] = [await start('native'), await start('stock-noise')]
      const other = peerIdFromPrivateKey(await generateKeyPair('Ed25519'))
      const { host, port } = b.getMultiaddrs()[0].toOptions()
      await assert.rejects(a.dial(multiaddr(`/ip4/${host}/tcp/${port}/p2p/${other.toString()}`)))
      assert.equal(a.getConnections(b.peerId).length, 0)
      // as a DHT answer would lead there: the other peer's record holds this listener's address
      await a.peerStore.merge(other, { multiaddrs: [multiaddr(`/ip4/${host}/tcp/${port}`)] })
      await assert.rejects(a.dial(other))
      assert.equal(a.getConnections(b.peerId).length, 0)
      // the same listener at an address naming it: noise connects
      const conn = await a.dial(multiaddr(`/ip4/${host}/tcp/${port}/p2p/${b.peerId.toString()}`))
      assert.equal(conn.encryption, '/noise')
      await echoes(a, b)
    })

    it('a listener whose TLS bytes come with its answer (the dialer on the stream path) and prove another peer than the address names', async () => {
      const dialer = await start('native')
      const named = await generateKeyPair('Ed25519')
      const impostor = await generateKeyPair('Ed25519')
      // the control: the same listener proving the named peer is reached, over the stream path
      for (const [proving, accepted] of [[named, true], [impostor, false]] as const) {
        const listener = await aheadListener(proving)
        try {
          const before = { ...nativeTlsStats }
          const addr = multiaddr(`/ip4/127.0.0.1/tcp/${listener.port}/p2p/${peerIdFromPrivateKey(named).toString()}`)
          if (accepted) {
            const conn = await dialer.dial(addr)
            assert.equal(conn.remotePeer.toString(), peerIdFromPrivateKey(named).toString())
            await conn.close().catch(() => {})
          } else {
            await assert.rejects(dialer.dial(addr))
            assert.equal(dialer.getConnections(peerIdFromPrivateKey(impostor)).length, 0)
          }
          assert.equal(nativeTlsStats.stream, before.stream + 1, 'the dialer took the stream path')
        } finally {
          await listener.close()
        }
      }
    })

    it('peers the connection gater denies once their identity is known, inbound and outbound', async () => {
      const banned = await start('native')
      const refusing: ConnectionGater = {
        denyInboundEncryptedConnection: async (peer: PeerId) => peer.equals(banned.peerId),
        denyOutboundEncryptedConnection: async (peer: PeerId) => peer.equals(banned.peerId)
      }
      const guarded = await start('native', refusing)
      // inbound: the banned dialer may finish its side of the handshake (yamux is chosen in it,
      // so its dial can resolve), but the listener drops the connection once it knows the peer
      await banned.dial(guarded.getMultiaddrs()[0]).catch(() => undefined)
      await waitFor(() => banned.getConnections(guarded.peerId).length === 0, { timeoutMs: 5_000, what: "the banned dialer's connection to close" })
      assert.equal(guarded.getConnections(banned.peerId).length, 0)
      // outbound: an address without a peer id meets the gater once the certificate named the peer
      const { host, port } = banned.getMultiaddrs()[0].toOptions()
      await assert.rejects(guarded.dial(multiaddr(`/ip4/${host}/tcp/${port}`)))
      assert.equal(guarded.getConnections().length, 0)
      const friend = await start('native')
      await echoes(friend, guarded)
    })

    it('a TLS client whose certificate carries no libp2p key', async () => {
      const n = await start('native')
      const { host, port } = n.getMultiaddrs()[0].toOptions()
      const socket = netConnect({ host, port })
      socket.on('error', () => {})
      await new Promise(resolve => socket.once('connect', resolve))
      socket.write(Buffer.concat([encodeMessage(MULTISTREAM), encodeMessage(TLS_PROTOCOL)]))
      await new Promise(resolve => setTimeout(resolve, 200))
      const { cert, key } = await plainCertificate()
      socket.removeAllListeners('data')
      const client = tlsConnect({ socket, cert, key, rejectUnauthorized: false, minVersion: 'TLSv1.3', ALPNProtocols: ['libp2p'] })
      client.on('error', () => {})
      const closed = await new Promise<boolean>(resolve => {
        const timer = setTimeout(() => { resolve(false) }, 5_000)
        client.once('close', () => { clearTimeout(timer); resolve(true) })
      })
      assert.ok(closed, 'the listener kept the connection')
      assert.equal(n.getConnections().length, 0)
    })
  })

  it('red team (issue 38.4): no RSA signature is checked either way: a client with an RSA certificate cannot sign to our listener, a listener with one cannot sign to our dialer', async () => {
    const rsa = await plainCertificate('rsa')
    const ours = await createCertificate(await generateKeyPair('Ed25519'))
    // our listener asks for a client certificate signed with ECDSA or Ed25519 only
    const listener = createTlsServer({
      secureContext: tlsContext(ours.cert, ours.key),
      requestCert: true,
      rejectUnauthorized: false
    })
    const seen = new Promise<string>(resolve => {
      listener.on('secureConnection', (socket) => { resolve(JSON.stringify(socket.getPeerCertificate()?.subject ?? {})); socket.destroy() })
      listener.on('tlsClientError', (err) => { resolve(`refused: ${err.message}`) })
    })
    await new Promise<void>(resolve => listener.listen(0, '127.0.0.1', resolve))
    const port = (listener.address() as { port: number }).port
    const client = tlsConnect({ host: '127.0.0.1', port, cert: rsa.cert, key: rsa.key, rejectUnauthorized: false, minVersion: 'TLSv1.3' })
    client.on('error', () => {})
    const atListener = await seen
    client.destroy()
    listener.close()
    assert.ok(atListener === '{}' || atListener.startsWith('refused'), `the listener took the RSA certificate: ${atListener}`)
    // a listener with an RSA certificate: our dialer offers it no scheme to sign with
    const hostile = createTlsServer({ cert: rsa.cert, key: rsa.key, minVersion: 'TLSv1.3' }, (socket) => { socket.destroy() })
    hostile.on('tlsClientError', () => {})
    await new Promise<void>(resolve => hostile.listen(0, '127.0.0.1', resolve))
    const dialer = tlsConnect({ host: '127.0.0.1', port: (hostile.address() as { port: number }).port, secureContext: tlsContext(ours.cert, ours.key), rejectUnauthorized: false })
    const outcome = await new Promise<string>(resolve => {
      dialer.once('secureConnect', () => { resolve('handshake completed') })
      dialer.once('error', (err) => { resolve(`refused: ${err.message}`) })
    })
    dialer.destroy()
    hostile.close()
    recordAttack({ issue: '38.4', attack: 'an RSA certificate (public exponent 2^31-1) on a dialer and on a listener', got: `listener: ${atListener.slice(0, 80)}; dialer: ${outcome.slice(0, 80)}`, limit: 'ECDSA and Ed25519 signatures only (TLS_SIGNATURE_ALGORITHMS)' })
    assert.match(outcome, /^refused/)
  })

  it('red team (issue 38.7, against a node process): an RSA client certificate is refused by a running idlegrid node\'s listener', async function () {
    this.timeout(60_000)
    const dir = await tempDir('idlegrid-rsa-')
    const node = await spawnNode('bootstrap', { dataDir: join(dir.path, 'node'), args: ['--listen', '/ip4/127.0.0.1/tcp/0'] })
    try {
      const addr = multiaddr(node.addrs.find(a => a.includes('/tcp/') && !a.includes('/ws')) as string).nodeAddress()
      const line = (text: string): Uint8Array => { const bytes = new TextEncoder().encode(`${text}\n`); return new Uint8Array([...varint.encode(bytes.length), ...bytes]) }
      /**
       * multistream-select to TLS in the clear, as libp2p dials, the handshake with `cert`, then a
       * muxer proposal: what the node does with it
       */
      const dialWith = async (cert: { cert: string, key: string }): Promise<string> => {
        const socket = netConnect(addr.port, addr.address)
        await once(socket, 'connect')
        socket.write(line('/multistream/1.0.0'))
        socket.write(line(TLS_PROTOCOL))
        let echoed = Buffer.alloc(0)
        while (!echoed.includes(Buffer.from(TLS_PROTOCOL))) echoed = Buffer.concat([echoed, (await once(socket, 'data'))[0] as Buffer])
        socket.pause()
        const client = tlsConnect({ socket, cert: cert.cert, key: cert.key, rejectUnauthorized: false, minVersion: 'TLSv1.3', ALPNProtocols: ['libp2p'] })
        const outcome = await new Promise<string>(resolve => {
          // TLS 1.3: the client finishes first; a node that took its certificate answers the muxer proposal
          client.once('secureConnect', () => {
            client.write(line('/multistream/1.0.0'))
            client.write(line('/yamux/1.0.0'))
            client.once('data', () => { resolve('answered') })
          })
          client.once('error', (err) => { resolve(`refused: ${err.message}`) })
          client.once('close', () => { resolve('closed by the node') })
          setTimeout(() => { resolve('no answer in 10 s') }, 10_000)
        })
        client.destroy()
        return outcome
      }
      // the control: a libp2p certificate of an Ed25519 key is taken, and the node answers
      const ed = await createCertificate(await generateKeyPair('Ed25519'))
      assert.equal(await dialWith({ cert: ed.cert, key: ed.key }), 'answered', 'a valid libp2p certificate gets an answer')
      const outcome = await dialWith(await plainCertificate('rsa'))
      recordAttack({ issue: '38.4', attack: 'an RSA client certificate against a running node process\'s TCP listener', got: outcome.slice(0, 100), limit: 'refused or closed, never answered' })
      assert.ok(outcome.startsWith('refused') || outcome === 'closed by the node', outcome)
      assert.equal(node.child.exitCode, null, 'the node runs on')
    } finally {
      await node.stop('SIGTERM', 5_000)
      await dir.cleanup()
    }
  })

  describe('a hostile dialer before the handshake', () => {
    const honestAfter = async (n: Libp2p): Promise<void> => {
      const friend = await start('native')
      await echoes(friend, n)
    }

    it('bytes that are not multistream-select are closed once their claimed length has arrived', async () => {
      const n = await start('native')
      // "G" reads as a 71-byte message, which does not end in a newline
      const request = 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: probe\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n'
      const { read, closedByPeer } = await rawSession(n, s => s.write(Buffer.from(request)), EARLY_MS)
      assert.ok(closedByPeer)
      assert.equal(read.length, 0)
      await honestAfter(n)
    })

    it('a message length beyond libp2p\'s bound is closed before the bytes arrive', async () => {
      const n = await start('native')
      const { closedByPeer } = await rawSession(n, s => s.write(Buffer.from([0xff, 0xff, 0x03])), EARLY_MS)
      assert.ok(closedByPeer)
      await honestAfter(n)
    })

    it('a dialer that says nothing is closed by the inbound upgrade timeout', async () => {
      const n = await start('native')
      const { closedByPeer } = await rawSession(n, () => {}, 10_000)
      assert.ok(closedByPeer, 'the silent socket was still open after 10 s (timeout 2 s)')
      await honestAfter(n)
    })

    it('a dialer that stops in the TLS handshake is closed by the same timeout', async () => {
      const n = await start('native')
      const { closedByPeer } = await rawSession(
        n,
        s => s.write(Buffer.concat([encodeMessage(MULTISTREAM), encodeMessage(TLS_PROTOCOL)])),
        10_000
      )
      assert.ok(closedByPeer)
      await honestAfter(n)
    })
  })
})

/**
 * A hand-made listener that answers a dialer's proposal of TLS with the first bytes of its TLS
 * record in the same write, so that libp2p's negotiation reads them ahead and the dialer's
 * encrypter must take the stream path; then a TLS 1.3 server proving `identity`.
 */
async function aheadListener (identity: PrivateKey): Promise<{ port: number, close: () => Promise<void> }> {
  const secureContext = createSecureContext({ ...await createCertificate(identity), minVersion: 'TLSv1.3' })
  const proposal = Buffer.concat([encodeMessage(MULTISTREAM), encodeMessage(TLS_PROTOCOL)])
  // a TLS 1.3 server's first record starts with these: handshake, legacy version 3.3
  const ahead = Buffer.from([0x16, 0x03, 0x03])
  const sockets = new Set<Socket>()
  const server = createServer(socket => {
    sockets.add(socket)
    socket.on('error', () => {})
    let received = Buffer.alloc(0)
    let skip = ahead.length
    const wire = new Duplex({
      write (chunk: Buffer, _enc, done) {
        const cut = Math.min(skip, chunk.length)
        skip -= cut
        if (chunk.length > cut) socket.write(chunk.subarray(cut))
        done()
      },
      read () {}
    })
    let answered = false
    socket.on('data', (chunk: Buffer) => {
      if (answered) {
        wire.push(chunk)
        return
      }
      received = Buffer.concat([received, chunk])
      if (received.length < proposal.length) return
      answered = true
      socket.write(Buffer.concat([proposal, ahead]))
      const server = new TLSSocket(wire as unknown as Socket, { isServer: true, secureContext, requestCert: true, rejectUnauthorized: false, ALPNProtocols: ['/yamux/1.0.0', 'libp2p'] })
      server.on('error', () => {})
      if (received.length > proposal.length) wire.push(received.subarray(proposal.length))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  assert.ok(address != null && typeof address === 'object')
  return {
    port: address.port,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise(resolve => server.close(resolve))
    }
  }
}

/** A self-signed certificate TLS accepts, with no libp2p extension: it proves no peer. */
async function plainCertificate (kind: 'ecdsa' | 'rsa' = 'ecdsa'): Promise<{ cert: string, key: string }> {
  // RSA with the largest exponent WebCrypto makes: each signature check costs its verifier more
  const alg = kind === 'rsa'
    ? { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([0x7f, 0xff, 0xff, 0xff]), hash: 'SHA-256' }
    : { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=plain',
    signingAlgorithm: alg,
    keys,
    notBefore: new Date(Date.now() - 3_600_000),
    notAfter: new Date(Date.now() + 86_400_000)
  }, webcrypto as unknown as Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[1])
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)
  return { cert: cert.toString('pem'), key: createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'pkcs8' }).toString() }
}
