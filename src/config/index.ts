export { resolveConfig, readConfigFile, defaultDataDir, ConfigFileError, ROLES, DEFAULT_LISTEN } from './config.js'
export type { NodeConfig, Role, ConfigSources } from './config.js'
export * from './validate.js'
