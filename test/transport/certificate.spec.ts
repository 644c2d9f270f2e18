/**
 * The libp2p TLS certificate (src/transport/certificate.ts): ours proves our peer id to our
 * checker, to @libp2p/tls's and across a real Node TLS 1.3 handshake, a stock one proves its
 * peer to ours, and each way a certificate can fail to prove a peer is refused with its own code.
 */
import * as assert from 'node:assert/strict'
import { randomBytes, webcrypto, X509Certificate } from 'node:crypto'
import { once } from 'node:events'
import { connect as tlsConnect, createServer as tlsCreateServer, type TLSSocket } from 'node:tls'
import { generateKeyPair, publicKeyToProtobuf } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import * as x509 from '@peculiar/x509'
import * as asn1js from 'asn1js'
import { createCertificate, LIBP2P_EXTENSION_OID, MAX_CERTIFICATE_BYTES, verifyPeerCertificate, type TlsCredentials } from '../../src/transport/certificate.js'
import { TransportError, type CertificateRejection } from '../../src/transport/errors.js'
import type { PrivateKey } from '@libp2p/interface'

type WebCrypto = Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[1]
const crypto = webcrypto as unknown as WebCrypto
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
const HOUR = 3_600_000
const CENTURY = 100 * 365 * 24 * HOUR
const PREFIX = Buffer.from('libp2p-tls-handshake:')

function der (pem: string): Uint8Array {
  return new Uint8Array(new X509Certificate(pem).raw)
}

function signedKey (publicKey: Uint8Array, signature: Uint8Array): ArrayBuffer {
  return new asn1js.Sequence({
    value: [new asn1js.OctetString({ valueHex: publicKey }), new asn1js.OctetString({ valueHex: signature })]
  }).toBER()
}

interface Forge {
  identity: PrivateKey
  /** the key whose SPKI the extension signs (default: the certificate's own) */
  signedSpkiOf?: CryptoKeyPair
  /** the extension values (default: one, correct) */
  extensions?: (ext: ArrayBuffer) => ArrayBuffer[]
  notBefore?: Date
  notAfter?: Date
  /** sign the certificate with this key instead of its own */
  issuerKeys?: CryptoKeyPair
  /** name this issuer instead of the subject (the certificate still signed by its own key) */
  issuer?: string
}

type CryptoKeyPair = Awaited<ReturnType<typeof webcrypto.subtle.generateKey>> & {
  publicKey: webcrypto.CryptoKey
  privateKey: webcrypto.CryptoKey
}

async function keyPair (): Promise<CryptoKeyPair> {
  return await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']) as CryptoKeyPair
}

/** A certificate built as the spec says, with one thing changed. */
async function forge (f: Forge): Promise<Uint8Array> {
  const keys = await keyPair()
  const spki = Buffer.from(await webcrypto.subtle.exportKey('spki', (f.signedSpkiOf ?? keys).publicKey))
  const signature = await f.identity.sign(Buffer.concat([PREFIX, spki]))
  const ext = signedKey(publicKeyToProtobuf(f.identity.publicKey), signature)
  const extensions = (f.extensions?.(ext) ?? [ext]).map(v => new x509.Extension(LIBP2P_EXTENSION_OID, true, v))
  const common = {
    serialNumber: '0102',
    notBefore: f.notBefore ?? new Date(Date.now() - HOUR),
    notAfter: f.notAfter ?? new Date(Date.now() + 24 * HOUR),
    signingAlgorithm: ALG,
    extensions
  }
  if (f.issuerKeys == null && f.issuer == null) return new Uint8Array((await x509.X509CertificateGenerator.createSelfSigned({ ...common, name: 'CN=forged', keys }, crypto)).rawData)
  const cert = await x509.X509CertificateGenerator.create({ ...common, subject: 'CN=forged', issuer: f.issuer ?? 'CN=forged', publicKey: keys.publicKey, signingKey: (f.issuerKeys ?? keys).privateKey }, crypto)
  return new Uint8Array(cert.rawData)
}

async function refused (
  bytes: Uint8Array,
  code: CertificateRejection,
  expected?: Parameters<typeof verifyPeerCertificate>[1],
  now?: number
): Promise<void> {
  await assert.rejects(verifyPeerCertificate(bytes, expected, now), (err: Error) => {
    assert.ok(err instanceof TransportError, `${err.name}: ${err.message}`)
    assert.equal(err.code, code, err.message)
    return true
  })
}

/** A TLS 1.3 handshake on 127.0.0.1, each side presenting its credentials; the DER certificate each side received. */
async function handshake (
  server: TlsCredentials,
  client: TlsCredentials
): Promise<{ atServer: Uint8Array, atClient: Uint8Array, protocol: string | null }> {
  const options = { requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.3' } as const
  const listener = tlsCreateServer({ ...server, ...options })
  try {
    listener.listen(0, '127.0.0.1')
    await once(listener, 'listening')
    const address = listener.address()
    assert.ok(address != null && typeof address === 'object')
    const accepted = once(listener, 'secureConnection') as Promise<[TLSSocket]>
    const socket = tlsConnect({ host: '127.0.0.1', port: address.port, ...client, ...options, checkServerIdentity: () => undefined })
    try {
      await once(socket, 'secureConnect')
      const [inbound] = await accepted
      const atServer = inbound.getPeerX509Certificate()?.raw
      const atClient = socket.getPeerX509Certificate()?.raw
      inbound.destroy()
      assert.ok(atServer != null, 'the server received no certificate')
      assert.ok(atClient != null, 'the client received no certificate')
      return { atServer: new Uint8Array(atServer), atClient: new Uint8Array(atClient), protocol: socket.getProtocol() }
    } finally {
      socket.destroy()
    }
  } finally {
    listener.close()
  }
}

/** @libp2p/tls's own generator and checker, from its build (the package exports neither). */
async function stockTls (): Promise<{
  generateCertificate: (key: PrivateKey) => Promise<{ cert: string }>
  verifyPeerCertificate: (raw: Uint8Array) => Promise<{ toString: () => string }>
}> {
  return await import(new URL('./utils.js', import.meta.resolve('@libp2p/tls')).href)
}

describe('libp2p TLS certificate', function () {
  this.timeout(20_000)
  let identity: PrivateKey

  before(async () => { identity = await generateKeyPair('Ed25519') })

  it('ours proves our peer id, to our checker and to @libp2p/tls', async () => {
    const { cert } = await createCertificate(identity)
    const peer = await verifyPeerCertificate(der(cert), peerIdFromPrivateKey(identity))
    assert.equal(peer.toString(), peerIdFromPrivateKey(identity).toString())
    const stock = await stockTls()
    assert.equal((await stock.verifyPeerCertificate(der(cert))).toString(), peer.toString())
  })

  it("@libp2p/tls's certificate proves its peer to ours", async () => {
    const stock = await stockTls()
    const { cert } = await stock.generateCertificate(identity)
    assert.equal((await verifyPeerCertificate(der(cert))).toString(), peerIdFromPrivateKey(identity).toString())
  })

  it('is valid from an hour back for 100 years, with a fresh key each time', async () => {
    const now = Date.now()
    const [a, b] = [
      new X509Certificate((await createCertificate(identity, now)).cert),
      new X509Certificate((await createCertificate(identity, now)).cert)
    ]
    assert.ok(Math.abs(Date.parse(a.validFrom) - (now - HOUR)) < 2_000)
    assert.ok(Date.parse(a.validTo) > now + 99 * 365 * 24 * HOUR)
    assert.notEqual(a.publicKey.export({ type: 'spki', format: 'der' }).toString('hex'), b.publicKey.export({ type: 'spki', format: 'der' }).toString('hex'))
  })

  it('is valid from exactly an hour back to 100 years on, whole seconds, and not a second outside', async () => {
    const now = Date.UTC(2025, 0, 2, 3, 4, 5, 678)
    const pem = (await createCertificate(identity, now)).cert
    const cert = new X509Certificate(pem)
    const from = Math.floor((now - HOUR) / 1000) * 1000
    const to = Math.floor((now + CENTURY) / 1000) * 1000
    assert.equal(cert.validFromDate.getTime(), from)
    assert.equal(cert.validToDate.getTime(), to)
    const peer = peerIdFromPrivateKey(identity).toString()
    assert.equal((await verifyPeerCertificate(der(pem), undefined, from)).toString(), peer)
    assert.equal((await verifyPeerCertificate(der(pem), undefined, to)).toString(), peer)
    await refused(der(pem), 'ERR_CERT_NOT_YET_VALID', undefined, from - 1)
    await refused(der(pem), 'ERR_CERT_EXPIRED', undefined, to + 1)
  })

  it('has a positive serial with no sign padding, and its one libp2p extension critical', async () => {
    for (let i = 0; i < 16; i++) {
      const cert = new x509.X509Certificate((await createCertificate(identity)).cert)
      const first = parseInt(cert.serialNumber.slice(0, 2), 16)
      assert.ok(cert.serialNumber.length >= 16 && first >= 0x01 && first < 0x80, `serial ${cert.serialNumber}`)
      const extensions = cert.extensions.filter(e => e.type === LIBP2P_EXTENSION_OID)
      assert.equal(extensions.length, 1)
      assert.equal(extensions[0].critical, true)
    }
  })

  it('carries a TLS 1.3 handshake in Node, each side proving its peer id to the other', async () => {
    const other = await generateKeyPair('Ed25519')
    const [ours, theirs] = [await createCertificate(identity), await createCertificate(other)]
    for (const [server, client, serverKey, clientKey] of [
      [ours, theirs, identity, other],
      [theirs, ours, other, identity]
    ] as const) {
      const { atServer, atClient, protocol } = await handshake(server, client)
      assert.equal(protocol, 'TLSv1.3')
      assert.equal(
        (await verifyPeerCertificate(atServer, peerIdFromPrivateKey(clientKey))).toString(),
        peerIdFromPrivateKey(clientKey).toString()
      )
      assert.equal(
        (await verifyPeerCertificate(atClient, peerIdFromPrivateKey(serverKey))).toString(),
        peerIdFromPrivateKey(serverKey).toString()
      )
    }
  })

  it('the forged certificates below, left unchanged, prove their peer (each refusal is its one change)', async () => {
    assert.equal(
      (await verifyPeerCertificate(await forge({ identity }))).toString(),
      peerIdFromPrivateKey(identity).toString()
    )
  })

  describe('refuses', () => {
    it('bytes that are not a certificate', async () => {
      await refused(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]), 'ERR_CERT_MALFORMED')
      await refused(new Uint8Array(0), 'ERR_CERT_MALFORMED')
      await refused(new Uint8Array(randomBytes(600)), 'ERR_CERT_MALFORMED')
      const whole = der((await createCertificate(identity)).cert)
      await refused(whole.subarray(0, whole.byteLength - 1), 'ERR_CERT_MALFORMED')
    })

    it('input beyond the bound, before parsing it', async () => {
      await refused(new Uint8Array(MAX_CERTIFICATE_BYTES + 1), 'ERR_CERT_TOO_LARGE')
    })

    it('a certificate not valid yet', async () => {
      await refused(await forge({ identity, notBefore: new Date(Date.now() + HOUR), notAfter: new Date(Date.now() + 2 * HOUR) }), 'ERR_CERT_NOT_YET_VALID')
    })

    it('an expired certificate', async () => {
      await refused(await forge({ identity, notBefore: new Date(Date.now() - 2 * HOUR), notAfter: new Date(Date.now() - HOUR) }), 'ERR_CERT_EXPIRED')
    })

    it('a certificate signed by a key other than its own', async () => {
      await refused(await forge({ identity, issuerKeys: await keyPair() }), 'ERR_CERT_NOT_SELF_SIGNED')
    })

    it('a certificate signed by its own key that names another issuer', async () => {
      await refused(await forge({ identity, issuer: 'CN=someone else' }), 'ERR_CERT_NOT_SELF_SIGNED')
    })

    it('a certificate without the libp2p extension', async () => {
      await refused(await forge({ identity, extensions: () => [] }), 'ERR_CERT_NO_LIBP2P_EXTENSION')
    })

    it('a certificate with two libp2p extensions', async () => {
      await refused(await forge({ identity, extensions: ext => [ext, ext] }), 'ERR_CERT_DUPLICATE_EXTENSION')
    })

    it('an extension that is not two OCTET STRINGs', async () => {
      await refused(await forge({ identity, extensions: () => [new asn1js.Sequence({ value: [new asn1js.OctetString({ valueHex: new Uint8Array(4) })] }).toBER()] }), 'ERR_CERT_MALFORMED_EXTENSION')
      await refused(await forge({ identity, extensions: () => [new asn1js.Integer({ value: 1 }).toBER()] }), 'ERR_CERT_MALFORMED_EXTENSION')
      await refused(await forge({ identity, extensions: () => [new asn1js.Sequence({ value: [new asn1js.OctetString({ valueHex: new Uint8Array(4) }), new asn1js.Integer({ value: 1 })] }).toBER()] }), 'ERR_CERT_MALFORMED_EXTENSION')
      await refused(await forge({ identity, extensions: ext => [new Uint8Array([...new Uint8Array(ext), 0x05, 0x00]).buffer] }), 'ERR_CERT_MALFORMED_EXTENSION')
    })

    it('an extension whose public key is oversized or not a libp2p key', async () => {
      await refused(await forge({ identity, extensions: () => [signedKey(new Uint8Array(2048), new Uint8Array(64))] }), 'ERR_CERT_MALFORMED_EXTENSION')
      await refused(await forge({ identity, extensions: () => [signedKey(new Uint8Array([0x08, 0x63, 0x12, 0x01, 0x00]), new Uint8Array(64))] }), 'ERR_CERT_BAD_KEY')
    })

    it("an extension that signs another certificate's key", async () => {
      await refused(await forge({ identity, signedSpkiOf: await keyPair() }), 'ERR_CERT_BAD_KEY_SIGNATURE')
    })

    it("an extension naming one identity with another's signature", async () => {
      const other = await generateKeyPair('Ed25519')
      const keys = await keyPair()
      const spki = Buffer.from(await webcrypto.subtle.exportKey('spki', keys.publicKey))
      const theirs = await other.sign(Buffer.concat([PREFIX, spki]))
      const cert = await x509.X509CertificateGenerator.createSelfSigned(
        {
          serialNumber: '0103',
          name: 'CN=forged',
          notBefore: new Date(Date.now() - HOUR),
          notAfter: new Date(Date.now() + HOUR),
          signingAlgorithm: ALG,
          keys,
          extensions: [
            new x509.Extension(LIBP2P_EXTENSION_OID, true, signedKey(publicKeyToProtobuf(identity.publicKey), theirs))
          ]
        },
        crypto
      )
      await refused(new Uint8Array(cert.rawData), 'ERR_CERT_BAD_KEY_SIGNATURE')
    })

    it('a valid certificate of a peer other than the one expected', async () => {
      const { cert } = await createCertificate(identity)
      const expected = peerIdFromPrivateKey(await generateKeyPair('Ed25519'))
      await refused(der(cert), 'ERR_CERT_UNEXPECTED_PEER', expected)
    })
  })
})
