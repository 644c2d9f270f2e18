export { tlsTcp, type TlsTcpInit, type TlsTcpComponents } from './tls-tcp.js'
export { nativeTls, nativeTlsStats, type NativeTlsComponents } from './native-tls.js'
export { TlsHandshakeError, TLS_PROTOCOL } from './secure.js'
export { CertificateError } from './certificate.js'
