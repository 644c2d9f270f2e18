/** The local control socket: a running node's methods for one-shot commands (newline-delimited JSON). */
export { startControlServer } from './server.js'
export type { ControlServer, ControlHandler } from './server.js'
export { callControl, isNodeRunning } from './client.js'
export { ControlError } from './protocol.js'
export { CONTROL_HANDLERS, isControlProvider } from './provider.js'
