import { CodedError } from '../common/index.js'

/**
 * - `ERR_SIM_SCENARIO`: a scenario file that cannot be read or is not YAML
 * - `ERR_SIM_TRACE`: a trace (or the trace a synthetic workload resamples) the simulator cannot use
 *
 * The CLI exits 2 on either.
 */
export type SimErrorCode = 'ERR_SIM_SCENARIO' | 'ERR_SIM_TRACE'

/** The sim room's error: a scenario, trace or option the simulator cannot use; the message says what and where. */
export class SimError extends CodedError<SimErrorCode> {
  constructor (code: SimErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options)
    this.name = 'SimError'
  }
}
