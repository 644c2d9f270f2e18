/**
 * The provider's docker runner settings: flags `--docker-host`, `--docker-user`, `--docker-pull`,
 * `--docker-max-shm` over the config file's `provider:` fields `dockerHost`, `dockerUser`,
 * `dockerPull`, `dockerMaxShmMiB`.
 */
import { asEnum, asNumber, asString, ConfigError, type Fields } from '../../config/index.js'
import { DEFAULT_MAX_SHM_MIB, type DockerSettings } from '../../exec/index.js'
import type { OptionTable, ParsedValues } from '../options.js'

export const DOCKER_OPTIONS: OptionTable = {
  'docker-host': { type: 'string', valueName: 'ADDR', description: 'Docker engine address, e.g. unix:///run/user/1000/docker.sock (default: $DOCKER_HOST, else the docker default)' },
  'docker-user': { type: 'string', valueName: 'UID:GID', description: 'numeric user jobs run as in their containers (default 65534:65534; never 0)' },
  'docker-pull': { type: 'string', valueName: 'missing|never', description: 'fetch a missing allowed image when a job needs it (missing, default) or run only images the engine has (never)' },
  'docker-max-shm': { type: 'string', valueName: 'MIB', description: `the most shared memory (/dev/shm) a job or service may ask for, MiB (default ${DEFAULT_MAX_SHM_MIB}; never above its memory limit)` }
}

/** The config file's provider fields that configure the runner, not the policy. */
const FILE_KEYS = { dockerHost: 'docker-host', dockerUser: 'docker-user', dockerPull: 'docker-pull', dockerMaxShmMiB: 'docker-max-shm' } as const
const USER = /^\d{1,10}:\d{1,10}$/

/** Splits the docker fields off the provider section: the rest is the policy. */
export function splitDockerFields (provider: Fields): { rest: Fields, file: Fields } {
  const rest: Fields = { ...provider }
  const file: Fields = {}
  for (const key of Object.keys(FILE_KEYS)) {
    if (key in rest) {
      file[key] = rest[key]
      delete rest[key]
    }
  }
  return { rest, file }
}

/** The docker settings from flags (first) and the file's fields; ConfigError naming the field. */
export function dockerSettings (values: ParsedValues, file: Fields): DockerSettings {
  const pick = (key: keyof typeof FILE_KEYS): { value: unknown, field: string } | undefined => {
    const flag = FILE_KEYS[key]
    if (values[flag] !== undefined) return { value: values[flag], field: `--${flag}` }
    if (file[key] !== undefined) return { value: file[key], field: `provider.${key}` }
    return undefined
  }
  const settings: DockerSettings = {}
  const host = pick('dockerHost')
  if (host != null) settings.host = asString(host.value, host.field, { nonEmpty: true })
  const user = pick('dockerUser')
  if (user != null) {
    settings.user = asString(user.value, user.field, { pattern: USER, patternText: 'numeric uid:gid, e.g. 65534:65534' })
    if (settings.user.startsWith('0:')) throw new ConfigError(user.field, 'an unprivileged uid:gid (docker jobs never run as root)', user.value)
  }
  const pull = pick('dockerPull')
  if (pull != null) settings.pull = asEnum(pull.value, pull.field, ['missing', 'never'] as const)
  const shm = pick('dockerMaxShmMiB')
  if (shm != null) settings.maxShmMiB = asNumber(shm.value, shm.field, { integer: true, min: 1, max: 1024 * 1024 })
  return settings
}
