import { CodedError } from '../common/index.js'

/** `ERR_DASHBOARD_TOKEN`: the data dir's dashboard token file holds no token. */
export type ObserveErrorCode = 'ERR_DASHBOARD_TOKEN'

/** The observe room's error. */
export class ObserveError extends CodedError<ObserveErrorCode> {
  constructor (code: ObserveErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options)
    this.name = 'ObserveError'
  }
}
