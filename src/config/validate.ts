/**
 * Small field validators for config files and flags. Each throws a ConfigError whose
 * message names the field (dotted path) and what was expected, so the CLI can print one
 * clear line and exit 2.
 */
import { CodedError } from '../common/index.js'

/**
 * - `ERR_CONFIG`: a field (of a config or job file, a flag, the environment) holds what it must not
 * - `ERR_CONFIG_FILE`: a config or job file cannot be read, or is not YAML
 *
 * Both are a mistake in how idlegrid was called: exit code 2 from the CLI.
 */
export type ConfigErrorCode = 'ERR_CONFIG' | 'ERR_CONFIG_FILE'

/** The config room's error. */
export class ConfigError extends CodedError<ConfigErrorCode> {
  /** the field at fault (dotted path); set for ERR_CONFIG */
  readonly field?: string

  /** ERR_CONFIG: `field` is not `expected`; the message names both, and `got` when given. */
  constructor (field: string, expected: string, got?: unknown)
  /** ERR_CONFIG_FILE: a file that cannot be read or parsed; the message says which and why. */
  constructor (code: 'ERR_CONFIG_FILE', message: string)
  constructor (field: string, expected: string, got?: unknown) {
    if (field === 'ERR_CONFIG_FILE') {
      super('ERR_CONFIG_FILE', expected)
    } else {
      super('ERR_CONFIG', got === undefined
        ? `config field "${field}": expected ${expected}`
        : `config field "${field}": expected ${expected}, got ${describe(got)}`)
      this.field = field
    }
    this.name = 'ConfigError'
  }
}

function describe (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? value.slice(0, 57) + '...' : value)
  if (typeof value === 'object') return 'an object'
  return String(value)
}

export type Fields = Record<string, unknown>

/** An object (map) or a ConfigError naming `field`. */
export function asObject (value: unknown, field: string): Fields {
  if (value == null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError(field, 'a mapping of fields', value)
  }
  return value as Fields
}

/** Rejects keys not in `known`, naming the first unknown one. */
export function onlyKnownKeys (obj: Fields, known: readonly string[], prefix: string): void {
  for (const key of Object.keys(obj)) {
    if (!known.includes(key)) {
      throw new ConfigError(join(prefix, key), `one of the known fields (${known.join(', ')})`, 'an unknown field')
    }
  }
}

export function join (prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}.${key}`
}

export function asString (
  value: unknown,
  field: string,
  opts: { nonEmpty?: boolean, pattern?: RegExp, patternText?: string } = {}
): string {
  if (typeof value !== 'string') throw new ConfigError(field, 'a string', value)
  if (opts.nonEmpty === true && value.trim() === '') throw new ConfigError(field, 'a non-empty string', value)
  if (opts.pattern != null && !opts.pattern.test(value)) throw new ConfigError(field, opts.patternText ?? `a string matching ${String(opts.pattern)}`, value)
  return value
}

export function asNumber (
  value: unknown,
  field: string,
  opts: { min?: number, max?: number, integer?: boolean } = {}
): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new ConfigError(field, 'a number', value)
  if (opts.integer === true && !Number.isInteger(n)) throw new ConfigError(field, 'a whole number', value)
  if (opts.min != null && n < opts.min) throw new ConfigError(field, `a number >= ${opts.min}`, value)
  if (opts.max != null && n > opts.max) throw new ConfigError(field, `a number <= ${opts.max}`, value)
  return n
}

export function asBoolean (value: unknown, field: string): boolean {
  if (typeof value === 'boolean') return value
  if (value === 'true') return true
  if (value === 'false') return false
  throw new ConfigError(field, 'true or false', value)
}

/** A list of strings; a single string or a comma-separated string is accepted too (flags). */
export function asStringList (value: unknown, field: string): string[] {
  if (typeof value === 'string') return value.split(',').map(s => s.trim()).filter(s => s !== '')
  if (!Array.isArray(value)) throw new ConfigError(field, 'a list of strings', value)
  return value.map((item, i) => asString(item, `${field}[${i}]`, { nonEmpty: true }))
}

/** One of `allowed`, compared case-insensitively; returns the canonical spelling. */
export function asEnum<T extends string> (value: unknown, field: string, allowed: readonly T[]): T {
  const s = typeof value === 'string' ? value.trim().toLowerCase() : undefined
  const hit = allowed.find(a => a.toLowerCase() === s)
  if (hit == null) throw new ConfigError(field, `one of ${allowed.join(', ')}`, value)
  return hit
}

export function asEnumList<T extends string> (value: unknown, field: string, allowed: readonly T[]): T[] {
  return asStringList(value, field).map((item, i) => asEnum(item, `${field}[${i}]`, allowed))
}
