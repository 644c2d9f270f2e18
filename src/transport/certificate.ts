/**
 * The certificate of libp2p's TLS handshake (https://github.com/libp2p/specs/blob/master/tls/tls.md
 * §"Peer Authentication"): self-signed, with a fresh key, and an extension in which the node's
 * identity key signs that key. Checking one proves the peer id of whoever completed the handshake.
 */
import { X509Certificate as NodeX509, createPrivateKey, randomBytes, webcrypto } from 'node:crypto'
import { publicKeyFromProtobuf, publicKeyToProtobuf } from '@libp2p/crypto/keys'
import { peerIdFromPublicKey } from '@libp2p/peer-id'
import * as x509 from '@peculiar/x509'
import * as asn1js from 'asn1js'
import { TransportError } from './errors.js'
import type { PeerId, PrivateKey, PublicKey } from '@libp2p/interface'

/** the libp2p public key extension */
export const LIBP2P_EXTENSION_OID = '1.3.6.1.4.1.53594.1.1'
const SIGNATURE_PREFIX = Buffer.from('libp2p-tls-handshake:')
const VALID_BEFORE_MS = 60 * 60 * 1000
const VALID_FOR_MS = 100 * 365 * 24 * 60 * 60 * 1000
/** far above a P-256 certificate (~450 bytes) or one with an RSA identity key */
export const MAX_CERTIFICATE_BYTES = 16 * 1024
/** a protobuf public key: RSA 4096 is ~550 bytes */
const MAX_PUBLIC_KEY_BYTES = 1024
const CERT_KEY = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
type WebCrypto = Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[1]

export interface TlsCredentials {
  /** PEM certificate */
  cert: string
  /** PEM PKCS#8 private key of the certificate */
  key: string
}

/** One per node run: a fresh P-256 key, its extension signed by the node's identity key. */
export async function createCertificate (identity: PrivateKey, now = Date.now()): Promise<TlsCredentials> {
  const keys = await webcrypto.subtle.generateKey(CERT_KEY, true, ['sign', 'verify'])
  const spki = Buffer.from(await webcrypto.subtle.exportKey('spki', keys.publicKey))
  const signature = await identity.sign(Buffer.concat([SIGNATURE_PREFIX, spki]))
  const notAfter = new Date(now + VALID_FOR_MS)
  notAfter.setMilliseconds(0)
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serialNumber(),
      notBefore: new Date(now - VALID_BEFORE_MS),
      notAfter,
      signingAlgorithm: CERT_KEY,
      keys,
      extensions: [
        new x509.Extension(LIBP2P_EXTENSION_OID, true, signedKey(publicKeyToProtobuf(identity.publicKey), signature))
      ]
    },
    webcrypto as unknown as WebCrypto
  )
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey))
  return { cert: cert.toString('pem'), key: createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'pkcs8' }).toString() }
}

/** A positive serial, its first byte below 0x80 (no sign padding, which Node's TLS refuses from @peculiar/x509). */
function serialNumber (): string {
  const bytes = randomBytes(16)
  bytes[0] = (bytes[0] & 0x7f) | 0x01
  return bytes.toString('hex')
}

/** SignedKey ::= SEQUENCE { publicKey OCTET STRING, signature OCTET STRING } */
function signedKey (publicKey: Uint8Array, signature: Uint8Array): ArrayBuffer {
  return new asn1js.Sequence({
    value: [new asn1js.OctetString({ valueHex: publicKey }), new asn1js.OctetString({ valueHex: signature })]
  }).toBER()
}

/**
 * The peer id a peer's certificate (DER) proves, checked as the spec says: valid now,
 * self-signed, one libp2p extension whose key signed the certificate's key. Throws
 * TransportError (ERR_CERT_*); with `expected`, also when it proves another peer.
 */
export async function verifyPeerCertificate (der: Uint8Array, expected?: PeerId, now = Date.now()): Promise<PeerId> {
  if (der.byteLength > MAX_CERTIFICATE_BYTES) throw new TransportError('ERR_CERT_TOO_LARGE', `a certificate of ${der.byteLength} bytes (at most ${MAX_CERTIFICATE_BYTES})`)
  let cert: NodeX509
  let parsed: x509.X509Certificate
  try {
    cert = new NodeX509(der)
    parsed = new x509.X509Certificate(der)
  } catch (err: any) {
    throw new TransportError('ERR_CERT_MALFORMED', `not an X.509 certificate: ${String(err?.message ?? err)}`)
  }
  if (cert.validFromDate.getTime() > now) throw new TransportError('ERR_CERT_NOT_YET_VALID', `the certificate is valid only from ${cert.validFromDate.toISOString()}`)
  if (cert.validToDate.getTime() < now) throw new TransportError('ERR_CERT_EXPIRED', `the certificate expired at ${cert.validToDate.toISOString()}`)
  if (!cert.checkIssued(cert) || !cert.verify(cert.publicKey)) throw new TransportError('ERR_CERT_NOT_SELF_SIGNED', 'the certificate is not signed by its own key')
  const extensions = parsed.extensions.filter(e => e.type === LIBP2P_EXTENSION_OID)
  if (extensions.length === 0) throw new TransportError('ERR_CERT_NO_LIBP2P_EXTENSION', 'the certificate has no libp2p public key extension')
  if (extensions.length > 1) throw new TransportError('ERR_CERT_DUPLICATE_EXTENSION', `the certificate has ${extensions.length} libp2p public key extensions`)
  const { publicKeyBytes, signature } = readSignedKey(extensions[0].value)
  let identity: PublicKey
  try {
    identity = publicKeyFromProtobuf(publicKeyBytes)
  } catch (err: any) {
    throw new TransportError('ERR_CERT_BAD_KEY', `the extension's public key is not a libp2p key: ${String(err?.message ?? err)}`)
  }
  const spki = cert.publicKey.export({ type: 'spki', format: 'der' })
  let signed: boolean
  try {
    signed = await identity.verify(Buffer.concat([SIGNATURE_PREFIX, spki]), signature)
  } catch {
    signed = false
  }
  if (!signed) throw new TransportError('ERR_CERT_BAD_KEY_SIGNATURE', "the extension's signature over the certificate's key does not verify")
  const peer = peerIdFromPublicKey(identity)
  if (expected != null && !expected.equals(peer)) throw new TransportError('ERR_CERT_UNEXPECTED_PEER', `the certificate proves ${peer.toString()}, not ${expected.toString()}`)
  return peer
}

function readSignedKey (value: ArrayBuffer): { publicKeyBytes: Uint8Array, signature: Uint8Array } {
  const malformed = (why: string): TransportError => new TransportError('ERR_CERT_MALFORMED_EXTENSION', `the libp2p extension is malformed: ${why}`)
  const { offset, result } = asn1js.fromBER(value)
  if (offset === -1 || offset !== value.byteLength) throw malformed('not one DER value')
  if (!(result instanceof asn1js.Sequence)) throw malformed('not a SEQUENCE')
  const [publicKey, signature, ...rest] = result.valueBlock.value
  if (rest.length > 0 || !(publicKey instanceof asn1js.OctetString) || !(signature instanceof asn1js.OctetString)) throw malformed('not two OCTET STRINGs')
  const publicKeyBytes = new Uint8Array(publicKey.valueBlock.valueHexView)
  if (publicKeyBytes.byteLength === 0 || publicKeyBytes.byteLength > MAX_PUBLIC_KEY_BYTES) throw malformed(`a public key of ${publicKeyBytes.byteLength} bytes`)
  return { publicKeyBytes, signature: new Uint8Array(signature.valueBlock.valueHexView) }
}
