import { CodedError } from '../common/index.js'

/** Why a peer's certificate proves no peer id, or not the one expected. */
export type CertificateRejection =
  'ERR_CERT_MALFORMED' | 'ERR_CERT_TOO_LARGE' | 'ERR_CERT_NOT_YET_VALID' | 'ERR_CERT_EXPIRED' | 'ERR_CERT_NOT_SELF_SIGNED' |
  'ERR_CERT_NO_LIBP2P_EXTENSION' | 'ERR_CERT_DUPLICATE_EXTENSION' | 'ERR_CERT_MALFORMED_EXTENSION' | 'ERR_CERT_BAD_KEY' |
  'ERR_CERT_BAD_KEY_SIGNATURE' | 'ERR_CERT_UNEXPECTED_PEER'

/**
 * - `ERR_CERT_*`: a peer's certificate proves no peer id, or not the one expected
 * - `ERR_TLS_HANDSHAKE`: the TLS handshake failed, or the peer's chain was not one certificate
 * - `ERR_DIAL_PORT`: a punch asked of a dial port no transport uses
 */
export type TransportErrorCode = CertificateRejection | 'ERR_TLS_HANDSHAKE' | 'ERR_DIAL_PORT'

/** The transport room's error. */
export class TransportError extends CodedError<TransportErrorCode> {
  constructor (code: TransportErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options)
    this.name = 'TransportError'
  }
}
