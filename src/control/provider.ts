import type { ControlHandler } from './server.js'

/**
 * The key under which a service offers control methods: a symbol, so a service answers
 * control calls only by declaring it (as libp2p services declare `serviceCapabilities`),
 * never because some method happens to share a name.
 */
export const CONTROL_HANDLERS: unique symbol = Symbol.for('@idlegrid/control-handlers')

/** A service that answers control calls; its methods join the node's. */
export interface ControlProvider {
  [CONTROL_HANDLERS](): Record<string, ControlHandler>
}

export function isControlProvider (value: unknown): value is ControlProvider {
  return typeof (value as Partial<ControlProvider> | undefined)?.[CONTROL_HANDLERS] === 'function'
}
