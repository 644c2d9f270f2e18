/** A scenario, trace or option the simulator cannot use; the message says what and where. */
export class SimError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'SimError'
  }
}
