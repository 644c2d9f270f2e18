/**
 * Library services (relay, AutoNAT) given components of our choosing: a factory sees the node's
 * components with some replaced, and a registrar whose handler for one protocol passes through
 * a wrapper of ours. So a library's own code runs unchanged, under the rules idlegrid adds.
 */
import type { StreamHandler, StreamHandlerOptions } from '@libp2p/interface'
import type { Registrar } from '@libp2p/interface-internal'

/**
 * `factory` (a libp2p service or transport factory) given the node's components, with those
 * `replace` returns in their place.
 */
export function withComponents<T> (
  factory: (components: any) => T,
  replace: (components: any) => Record<string, unknown>
): (components: any) => T {
  return (components) => {
    const own = replace(components)
    return factory(new Proxy(components, {
      get: (target, prop, receiver) => typeof prop === 'string' && prop in own ? own[prop] : Reflect.get(target, prop, receiver)
    }))
  }
}

/** `registrar` whose handler for `protocol` is `wrap(handler)` (every other call as it was). */
export function wrappedHandler (
  registrar: Registrar,
  protocol: string,
  wrap: (handler: StreamHandler) => StreamHandler
): Registrar {
  return new Proxy(registrar, {
    get: (target, prop) => {
      const value = Reflect.get(target, prop, target)
      if (prop !== 'handle') return typeof value === 'function' ? value.bind(target) : value
      return async (id: string, handler: StreamHandler, options?: StreamHandlerOptions) => {
        await target.handle(id, id === protocol ? wrap(handler) : handler, options)
      }
    }
  })
}
