import { loadProviderSetup, POLICY_FLAGS } from '../../capability/index.js'
import { isNodeRunning } from '../../control/index.js'
import { asEnum } from '../../config/index.js'
import { resolve } from 'node:path'
import { checkWorkRootOutside, defaultWorkRoot, planJobUser, RUNNER_KINDS } from '../../exec/index.js'
import { UsageError } from '../errors.js'
import { COMMON_OPTIONS, NODE_OPTIONS, type OptionTable, type ParsedValues } from '../options.js'
import { OBSERVE_OPTIONS } from '../../observe/index.js'
import { DOCKER_OPTIONS, dockerSettings, splitDockerFields } from './docker-options.js'
import { LEDGER_ROLE_OPTIONS, ledgerBuildOptions } from './ledger.js'
import type { BuildOptions } from '../../compose/index.js'
import type { Output } from '../output.js'
import type { NodeConfig } from '../../config/index.js'
import { runRole } from '../run-role.js'
import type { CommandDefinition } from '../command.js'

const ROLE_DETAILS = 'Runs until SIGINT/SIGTERM, then stops cleanly (exit 0). One-shot commands (idlegrid status, id, …)\ntalk to it through the control socket in its data directory.'

export const bootstrapCommand: CommandDefinition = {
  name: 'bootstrap',
  usage: 'idlegrid bootstrap [options]',
  options: { ...NODE_OPTIONS, ...LEDGER_ROLE_OPTIONS, ...OBSERVE_OPTIONS, ...COMMON_OPTIONS },
  details: `${ROLE_DETAILS}\nDefault listen addresses: /ip4/127.0.0.1/tcp/4001 and /ip4/127.0.0.1/tcp/4002/ws; use\n--listen /ip4/0.0.0.0/tcp/4001 to serve other machines. It prints the multiaddrs peers should use.`,
  run: async (values, _, out) => await runRole('bootstrap', values, out, async () => ({ ledger: ledgerBuildOptions(values) }))
}

/** Provider policy and capability flags; each policy flag overrides the config file's `provider:` field. */
export const PROVIDER_OPTIONS: OptionTable = {
  region: { type: 'string', valueName: 'REGION', description: 'region, e.g. eu-west (residency zone = its prefix)' },
  'price-floor': { type: 'string', valueName: 'USD', description: 'lowest price accepted, USD per GPU-hour, e.g. 1.20' },
  tiers: { type: 'string', multiple: true, valueName: 'LIST', description: 'accepted tiers: gold,silver,bronze (default all)' },
  workloads: { type: 'string', multiple: true, valueName: 'LIST', description: 'inference,training,batch-inference,evaluation,sweep (default all)' },
  images: { type: 'string', multiple: true, valueName: 'LIST', description: 'allowed docker images (entries may end in *; "*" = any; default none)' },
  windows: { type: 'string', multiple: true, valueName: 'LIST', description: 'availability windows, e.g. "mon-fri 19:00-07:00;sat-sun" (default always)' },
  'time-zone': { type: 'string', valueName: 'TZ', description: 'IANA time zone of the windows (default UTC)' },
  'max-job-minutes': { type: 'string', valueName: 'MIN', description: 'longest job accepted (default 1440)' },
  'max-temp': { type: 'string', valueName: 'C', description: 'GPU temperature limit, °C (default 85)' },
  'max-power': { type: 'string', valueName: 'W', description: 'board power limit, watts' },
  datasets: { type: 'string', multiple: true, valueName: 'LIST', description: 'sha256 digests of locally cached datasets' },
  grace: { type: 'string', valueName: 'S', description: 'seconds a preempted job gets between SIGTERM and SIGKILL (default 10)' },
  'max-slots-per-renter': { type: 'string', valueName: 'N', description: 'GPU slots one renter\'s jobs may hold or wait for at once (default one per GPU)' },
  'disk-budget': { type: 'string', valueName: 'GIB', description: 'disk all jobs in progress may hold, GiB: each reserves its declared inputs + the 4 GiB output bound (default 16 per GPU)' },
  'input-cache': { type: 'string', valueName: 'GIB', description: 'job inputs kept for the renters\' next jobs (by sha256; private to each renter unless marked public), inside the disk budget, GiB (default a quarter of it; 0: none)' },
  'simulate-gpu': { type: 'string', multiple: true, valueName: 'MODEL:VRAM_GB[:COUNT]', description: 'advertise simulated GPUs instead of running nvidia-smi (repeatable; development)' },
  'nvidia-smi': { type: 'string', valueName: 'PATH', description: 'nvidia-smi binary (default: nvidia-smi on PATH)' },
  'record-ttl-seconds': { type: 'string', valueName: 'S', description: 'capability record lifetime, refreshed at half of it (default 1800, 5..7200)' },
  'usage-interval-seconds': { type: 'string', valueName: 'S', description: 'a co-signed usage statement per hosted service lease this often (default 60, 1..3600)' },
  runner: { type: 'string', valueName: 'docker|process', description: 'how jobs run: docker (default; containers) or process (plain processes: weaker than docker, see README "Runners")' },
  'work-root': { type: 'string', valueName: 'DIR', description: 'where job work dirs are made, never inside the data dir (default <tmpdir>/idlegrid-jobs-<hash of the data dir>)' },
  'job-user': { type: 'string', valueName: 'NAME|UID[:GID]|FIRST-LAST', description: 'process runner, provider run as root: whom jobs run as (default: uids 61184-61439, one per running job; a single user is shared by concurrent jobs)' },
  ...DOCKER_OPTIONS
}

/** Validates the provider's policy and finds its GPUs before the node starts. */
async function prepareProvider (config: NodeConfig, values: ParsedValues, out: Output): Promise<BuildOptions> {
  // a node already running on this data directory is the more fundamental problem: let the
  // node's own lock report it rather than a policy or GPU complaint
  if (await isNodeRunning(config.dataDir)) return {}
  const flags: Record<string, string | string[] | undefined> = {}
  for (const name of Object.keys(POLICY_FLAGS)) {
    const value = values[name]
    if (typeof value === 'string' || (Array.isArray(value) && value.every(v => typeof v === 'string'))) flags[name] = value as string | string[]
  }
  const usageIntervalMs = usageIntervalFlag(values['usage-interval-seconds'])
  const docker = splitDockerFields(config.provider)
  const { profile, recordTtlMs } = await loadProviderSetup({
    raw: docker.rest,
    flags,
    simulateGpu: values['simulate-gpu'] as string[] | undefined,
    nvidiaSmi: values['nvidia-smi'] as string | undefined,
    recordTtlSeconds: values['record-ttl-seconds'] as string | undefined
  })
  const gpus = profile.groups.map(g => `${g.count}x ${g.modelKey} ${Math.round(g.vramMib / 1024)}GB${g.simulated ? ' (simulated)' : ''}`).join(', ')
  out.info(`advertising ${gpus} in ${profile.policy.region} from ${profile.policy.priceFloor} USD/GPU-hour`)
  const runner = values.runner === undefined ? 'docker' : asEnum(values.runner, 'runner', RUNNER_KINDS)
  const jobUser = values['job-user'] as string | undefined
  const workRoot = values['work-root'] === undefined ? undefined : resolve(values['work-root'] as string)
  try {
    checkWorkRootOutside(workRoot ?? defaultWorkRoot(config.dataDir), config.dataDir)
  } catch (err: any) {
    throw new UsageError(`--work-root: ${String(err?.message ?? err)}`)
  }
  if (runner === 'process') warnProcessRunner(jobUser, workRoot ?? defaultWorkRoot(config.dataDir), out)
  return { provider: { profile, recordTtlMs, runner, nvidiaSmi: values['nvidia-smi'] as string | undefined, jobUser, workRoot, docker: dockerSettings(values, docker.file), usageIntervalMs } }
}

/** --usage-interval-seconds as ms (1 s to 1 h), or undefined for the default. */
function usageIntervalFlag (value: unknown): number | undefined {
  if (value === undefined) return undefined
  const seconds = Number(value)
  if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(seconds) || seconds < 1 || seconds > 3600) throw new UsageError(`--usage-interval-seconds: ${String(value)} is not a number of seconds from 1 to 3600`)
  return Math.round(seconds * 1000)
}

/** Says whom process jobs run as and what that does not isolate; a bad --job-user is a usage error. */
function warnProcessRunner (jobUser: string | undefined, workRoot: string, out: Output): void {
  let plan
  try {
    plan = planJobUser(jobUser)
  } catch (err: any) {
    throw new UsageError(`--job-user: ${String(err?.message ?? err)}`)
  }
  if (!plan.dedicated) {
    out.warn(`warning: --runner process: jobs run as this provider's own user (uid ${String(plan.uids[0])}) and can read whatever it can, the node key included; run the provider as root (jobs then run as uids of their own, or --job-user) or use --runner docker`)
  } else {
    out.warn(`warning: --runner process is weaker than docker (shared kernel, filesystem view and network); jobs run as ${plan.describe} in ${workRoot}`)
    if (plan.uids.length === 1) out.warn('warning: concurrent jobs share that uid and can read each other\'s files; leave --job-user unset (or give a uid range) so each gets its own')
  }
}

export const providerCommand: CommandDefinition = {
  name: 'provider',
  usage: 'idlegrid provider [options]',
  options: { ...NODE_OPTIONS, ...PROVIDER_OPTIONS, ...LEDGER_ROLE_OPTIONS, ...OBSERVE_OPTIONS, ...COMMON_OPTIONS },
  details: `${ROLE_DETAILS}\nPolicy flags override the config file's provider: section. Without NVIDIA GPUs (nvidia-smi) and\nwithout --simulate-gpu the provider refuses to start. The signed capability record is published in the\nDHT under /idlegrid/cap/<peer id>; see it with the node's control method capability.record.`,
  run: async (values, _, out) => await runRole('provider', values, out, async (config) => ({ ...(await prepareProvider(config, values, out)), ledger: ledgerBuildOptions(values) }))
}

export const renterCommand: CommandDefinition = {
  name: 'renter',
  usage: 'idlegrid renter [options]',
  options: { ...NODE_OPTIONS, ...LEDGER_ROLE_OPTIONS, ...OBSERVE_OPTIONS, ...COMMON_OPTIONS },
  details: ROLE_DETAILS,
  run: async (values, _, out) => await runRole('renter', values, out, async () => ({ ledger: ledgerBuildOptions(values) }))
}
