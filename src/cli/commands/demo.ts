import { asEnum, asNumber } from '../../config/index.js'
import { DEFAULT_DEMO_IMAGE, demoImage, runDemo } from '../../demo/index.js'
import { EXIT } from '../errors.js'
import { COMMON_OPTIONS } from '../options.js'
import type { CommandDefinition } from '../command.js'

export const demoCommand: CommandDefinition = {
  name: 'demo',
  usage: 'idlegrid demo [options]',
  options: {
    providers: { type: 'string', valueName: 'N', description: 'provider processes to start (default 5, at least 5 for the full scenario)' },
    jobs: { type: 'string', valueName: 'N', description: 'scenario jobs to play (default 5: bronze, gold preempting it, silver, EU residency, impossible; more adds silver jobs)' },
    keep: { type: 'boolean', description: 'leave the network running at the end and print how to reach it' },
    services: { type: 'boolean', description: 'add the services act (about a minute more): the sentiment service deployed in the EU and the US, a burst of requests, one replica killed, traffic moving, the replacement arriving; --jobs 0 --services plays the act alone' },
    runner: { type: 'string', valueName: 'process|docker', description: 'how providers run jobs: process (default) or docker (containers on the engine at $DOCKER_HOST)' },
    image: { type: 'string', valueName: 'IMAGE', description: `image of the docker jobs (default $IDLEGRID_DEMO_IMAGE, else ${DEFAULT_DEMO_IMAGE}; scripts/docker-engine.sh image imports it)` },
    ...COMMON_OPTIONS
  },
  details: 'Needs nothing but this checkout: simulated GPUs, the process runner, and the batch-scoring workload in examples/.\nWith --runner docker the jobs run in containers (a busybox-shell twin of the workload) on a running engine.',
  run: async (values, _, out) => {
    const providers = asNumber(values.providers ?? 5, 'providers', { integer: true, min: 1, max: 50 })
    const jobs = asNumber(values.jobs ?? 5, 'jobs', { integer: true, min: 0, max: 50 })
    const kind = asEnum(values.runner ?? 'process', 'runner', ['process', 'docker'] as const)
    const runner = kind === 'docker' ? { kind, image: demoImage(values.image as string | undefined) } : { kind }
    const summary = await runDemo(
      { providers, jobs, keep: values.keep === true, runner, services: values.services === true },
      out
    )
    out.data(summary)
    return summary.ok ? EXIT.ok : EXIT.failure
  }
}
