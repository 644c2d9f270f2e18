export { tlsTcp, PeerRefusedError, type TlsTcpInit, type TlsTcpComponents } from './tls-tcp.js'
export { NegotiationError } from './multistream.js'
export { TlsHandshakeError, TLS_PROTOCOL } from './secure.js'
export { CertificateError } from './certificate.js'
