/**
 * Node configuration: the config file, flags and environment resolved into one NodeConfig, and the
 * field validators.
 */
export { resolveConfig, readConfigFile, ROLES, defaultDataDir } from './config.js'
export type { NodeConfig, Role } from './config.js'
export { missingBootstrap } from './bootstrap.js'
export { needsRelays, RELAY_RESERVATIONS } from './reach.js'
export { ConfigError, asBoolean, asEnum, asNumber, asObject, asString, asStringList, join, onlyKnownKeys } from './validate.js'
export type { Fields } from './validate.js'
