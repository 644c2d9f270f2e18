/**
 * What a fuzz target is: a decoder or validator the network or a user can reach, the typed
 * errors it may throw for bad input (anything else is a crash), and the inputs to feed it.
 * Every input is bytes (text targets take UTF-8), so any input that ever broke something is
 * kept as one .hex file in test/fuzz/corpus/<target>/ and replayed by a spec.
 */
import type fc from 'fast-check'
import { isCoded, type CodedError } from '../../src/common/index.js'

export type ErrorClass = abstract new (...args: any[]) => Error

/** A room's coded error, typed only with these codes. */
export interface CodedTyped {
  cls: abstract new (...args: any[]) => CodedError
  codes: readonly string[]
}

export interface FuzzTarget {
  name: string
  /** the code it reaches, one line */
  what: string
  /** errors the target throws for bad input, by design; any other throw is a crash */
  typed: ReadonlyArray<ErrorClass | CodedTyped>
  arbitrary: fc.Arbitrary<Uint8Array>
  /** throws a typed error for rejected input; a BoundError when a bound did not hold */
  run: (input: Uint8Array) => void | Promise<void>
  /** async targets go through fast-check's async runner */
  async: boolean
  /** share of the full run's inputs relative to other targets (cost-weighted) */
  weight: number
  /** releases what the target holds (stores, directories) */
  close?: () => Promise<void>
}

/** A target built on demand: each runs alone (a worker in the full run). */
export interface TargetFactory {
  name: string
  build: () => Promise<FuzzTarget>
}

/** A bound did not hold: more decoded than allowed, an accepted input it should not be, a result out of range. */
export class BoundError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'BoundError'
  }
}

/** A validator that must never throw (it answers with a verdict) did, or answered outside its range. */
export class VerdictError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'VerdictError'
  }
}

/**
 * Checks a decoded message against repeated-field limits (the shape of codec.ts LIMITS: a
 * number bounds an array's length, an object the fields of a sub-message, `field$` each
 * element of a repeated sub-message) and checks that no decoded bytes field is longer than
 * the input: the decoder allocated nothing beyond what it was given.
 */
export function checkDecoded (value: unknown, limits: Record<string, unknown> | undefined, inputBytes: number, path = ''): void {
  if (value == null || typeof value !== 'object') return
  if (value instanceof Uint8Array) {
    if (value.byteLength > inputBytes) throw new BoundError(`${path} decoded to ${value.byteLength} bytes from a ${inputBytes}-byte input`)
    return
  }
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    const limit = limits?.[key]
    // enums decode to their names, which may be longer than their varint: only long strings count
    if (typeof field === 'string' && field.length > Math.max(inputBytes, 64)) throw new BoundError(`${path}${key} decoded to ${field.length} characters from a ${inputBytes}-byte input`)
    if (Array.isArray(field)) {
      if (typeof limit === 'number' && field.length > limit) throw new BoundError(`${path}${key} has ${field.length} elements, limit ${limit}`)
      if (field.length > inputBytes) throw new BoundError(`${path}${key} has ${field.length} elements from a ${inputBytes}-byte input`)
      const each = limits?.[`${key}$`] as Record<string, unknown> | undefined
      for (const item of field) checkDecoded(item, each, inputBytes, `${path}${key}[].`)
    } else {
      checkDecoded(field, typeof limit === 'object' ? limit as Record<string, unknown> : undefined, inputBytes, `${path}${key}.`)
    }
  }
}

/** A gossip validator's verdict other than accept: counted by action and reason, like a typed rejection. */
export class NotAccepted extends Error {
  constructor (action: string, reason: string) {
    super(reason)
    this.name = `${action}:${reason.replace(/[0-9]+/g, 'N').slice(0, 60)}`
  }
}

/** Whether `err` is one of `typed`. */
export function isTyped (err: unknown, typed: ReadonlyArray<ErrorClass | CodedTyped>): boolean {
  return typed.some(t => typeof t === 'function' ? err instanceof t : isCoded(err, t.cls, ...t.codes))
}
