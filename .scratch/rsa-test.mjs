import { webcrypto, createPrivateKey } from 'node:crypto'
import * as x509 from '@peculiar/x509'
import tls from 'node:tls'
const alg = { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 0, 0, 1]), hash: 'SHA-256' }
const t0 = Date.now()
const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])
console.log('gen ms', Date.now() - t0)
const cert = await x509.X509CertificateGenerator.createSelfSigned({ serialNumber: '01', name: 'CN=rsa', signingAlgorithm: alg, keys, notBefore: new Date(Date.now() - 3600000), notAfter: new Date(Date.now() + 86400000) }, webcrypto)
const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)
const key = createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'pkcs8' }).toString()
console.log(cert.toString('pem').length, key.length)
