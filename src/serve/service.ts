/**
 * Services as libp2p services. On a provider, `serveHostService` answers /idlegrid/serve/1.1.0 (and 1.0.0)
 * for the leases its job service runs (the ServeHost is shared with exec, which calls its
 * lease hooks). On a renter, `deploymentsService` holds the deployments and their gateways and
 * offers `services.deploy|ls|status|scale|stop` on the control socket.
 */
import { resolve } from 'node:path'
import { serviceDependencies, type ComponentLogger, type Logger, type PeerId, type PrivateKey, type Startable, type Ed25519PrivateKey } from '@libp2p/interface'
import { PROTOCOL } from '../../protocols/ids.js'
import { CONTROL_HANDLERS, type ControlHandler } from '../control/index.js'
import { LEDGER_CAPABILITY, LEDGER_SERVICE } from '../ledger/index.js'
import { MARKET_RENTER_CAPABILITY, MARKET_RENTER_SERVICE } from '../market/index.js'
import { ServeError } from './errors.js'
import { Deployment, type DeploymentEvent } from './deployment.js'
import { parseServiceSpec, serviceInputs, type ServiceSpec } from './service-file.js'
import { HOST_DEFAULTS, type ServeHost } from './host.js'
import { UsageDesk, usageHandler, UsageReporter } from './usage/index.js'
import { longStreamDialer } from '../node/index.js'
import type { LedgerService } from '../ledger/index.js'
import type { SubmitComponents } from '../submit/index.js'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'

export const SERVE_HOST_SERVICE = 'serveHost'
export const DEPLOYMENTS_SERVICE = 'deployments'

/** What the serve host uses of the node; the ledger only when the node has one (usage statements). */
export interface ServeHostComponents {
  registrar: Registrar
  logger: ComponentLogger
  peerId: PeerId
  privateKey: PrivateKey
  connectionManager: ConnectionManager
  [LEDGER_SERVICE]?: LedgerService
}

/**
 * Provider: the serve protocol's handler over a ServeHost, and its leases' usage statements when
 * the node keeps a ledger.
 */
export function serveHostService (
  host: ServeHost,
  opts: { usageIntervalMs?: number } = {}
): (components: ServeHostComponents) => Startable {
  return (components) => ({
    [Symbol.toStringTag]: '@idlegrid/serve-host',
    afterStart () {
      const reporter = usageReporterOf(components)
      if (reporter == null) return
      host.usage = reporter
      reporter.start(opts.usageIntervalMs ?? HOST_DEFAULTS.usageIntervalMs)
    },
    beforeStop () {
      host.usage?.stop()
    },
    async start () {
      const log = components.logger.forComponent('idlegrid:serve')
      // 1.1.0 streams carry requests in turn; a 1.0.0 gateway ends its stream after one, which the
      // same handler takes as a clean end
      for (const protocol of [PROTOCOL.serve, PROTOCOL.serveV1]) {
        await components.registrar.handle(protocol, ({ stream, connection }) => {
          host.handle(stream, connection.remotePeer).catch((err: unknown) => { log.error('serve stream failed: %e', err) })
        }, { maxInboundStreams: 256, maxOutboundStreams: 1 })
      }
    },
    async stop () {
      await components.registrar.unhandle(PROTOCOL.serve)
      await components.registrar.unhandle(PROTOCOL.serveV1)
    },
    [CONTROL_HANDLERS]: () => ({
      'services.hosted': async () => ({ leases: [...host.leases.values()], usage: Object.fromEntries(host.usage?.last ?? []) })
    })
  }) as Startable
}

/** The node's usage reporter, or none when it keeps no ledger (libp2p's components throw for a missing service). */
function usageReporterOf (components: ServeHostComponents): UsageReporter | undefined {
  let ledger: LedgerService | undefined
  try { ledger = components[LEDGER_SERVICE] } catch { return undefined }
  if (ledger == null || components.privateKey.type !== 'Ed25519') return undefined
  return new UsageReporter({
    key: components.privateKey,
    self: components.peerId,
    ledger,
    dialer: longStreamDialer(components)
  })
}

/**
 * A deployment runs its replicas' auctions and jobs through the renter's submit path: the same
 * components, and the registrar for the usage protocol.
 */
export type DeploymentsComponents = SubmitComponents & { registrar: Registrar }

export interface DeploymentsInit {
  /** replicas' logs go under <baseDir>/<service>/<lease id>/ (default ./idlegrid-out/services) */
  baseDir?: string
  probeMs?: number
}

export class Deployments implements Startable {
  readonly [serviceDependencies]: string[] = [MARKET_RENTER_CAPABILITY, LEDGER_CAPABILITY]
  readonly [Symbol.toStringTag] = '@idlegrid/deployments'
  readonly deployments = new Map<string, Deployment>()
  private readonly log: Logger
  /** countersigns the usage our replicas' providers propose (src/serve/usage) */
  readonly usage?: UsageDesk

  constructor (private readonly components: DeploymentsComponents, private readonly init: DeploymentsInit) {
    this.log = components.logger.forComponent('idlegrid:serve')
    const key = components.privateKey
    if (key.type === 'Ed25519') this.usage = new UsageDesk({ key, self: components.peerId, ledger: components[LEDGER_SERVICE] })
  }

  async start (): Promise<void> {
    if (this.usage != null) {
      await this.components.registrar.handle(PROTOCOL.usage, usageHandler(this.usage), {
        maxInboundStreams: 64,
        maxOutboundStreams: 1
      })
    }
  }

  async stop (): Promise<void> {
    await this.components.registrar.unhandle(PROTOCOL.usage).catch(() => {})
    await Promise.all([...this.deployments.values()].map(async d => { await d.stop() }))
    this.deployments.clear()
  }

  /** Starts a deployment: its gateway at once, one auction per replica. */
  async deploy (spec: ServiceSpec): Promise<Deployment> {
    if (this.deployments.has(spec.name)) throw new ServeError('ERR_SERVE', `service ${spec.name} is already deployed; scale or stop it`)
    const privateKey = this.components.privateKey
    if (privateKey.type !== 'Ed25519') throw new ServeError('ERR_SERVE', 'receipts are signed with the node\'s Ed25519 key')
    const dialer = longStreamDialer(this.components)
    const payload = Deployment.payload(spec, await serviceInputs(spec))
    const deployment = new Deployment(spec, payload, {
      dialer,
      market: this.components[MARKET_RENTER_SERVICE],
      privateKey: privateKey as Ed25519PrivateKey,
      peerId: this.components.peerId,
      baseDir: resolve(this.init.baseDir ?? 'idlegrid-out/services', spec.name),
      probeMs: this.init.probeMs,
      usage: this.usage,
      onReceipt: (receipt) => { this.components[LEDGER_SERVICE].recordReceipt(receipt.envelope).catch((err: unknown) => { this.log.error('receipt not recorded: %e', err) }) }
    })
    this.deployments.set(spec.name, deployment)
    await deployment.start()
    return deployment
  }

  get (name: unknown): Deployment {
    const d = typeof name === 'string' ? this.deployments.get(name) : undefined
    if (d == null) throw new ServeError('ERR_SERVE', `no service named ${String(name).slice(0, 64)} is deployed here`)
    return d
  }

  async stopService (name: unknown): Promise<void> {
    const d = this.get(name)
    this.deployments.delete(d.spec.name)
    await d.stop()
  }

  [CONTROL_HANDLERS] (): Record<string, ControlHandler> {
    return {
      /**
       * params: { spec: parsed service file fields, baseDir, waitMs }; resolves when every replica
       * is ready or waitMs passed
       */
      'services.deploy': async (params, emit, signal) => {
        const spec = parseServiceSpec(params.spec, typeof params.baseDir === 'string' ? params.baseDir : undefined)
        const d = await this.deploy(spec)
        const off = d.onEvent(e => { emit(e) })
        try {
          const waitMs = typeof params.waitMs === 'number' ? Math.min(params.waitMs, 600_000) : 60_000
          const until = Date.now() + waitMs
          while (d.ready().length < d.size && Date.now() < until && !signal.aborted) {
            await new Promise(resolve => setTimeout(resolve, 200))
          }
        } finally {
          off()
        }
        return statusOf(d)
      },
      'services.ls': async () => ({ services: [...this.deployments.values()].map(d => ({ name: d.spec.name, url: d.gateway.url, size: d.size, ready: d.ready().length })) }),
      'services.status': async (params) => statusOf(this.get(params.name), true),
      'services.scale': async (params) => {
        const d = this.get(params.name)
        const n = Number(params.replicas)
        if (!Number.isInteger(n) || n < 0 || n > 32) throw new ServeError('ERR_SERVE', `replicas must be a whole number from 0 to 32, got ${String(params.replicas)}`)
        d.scale(n)
        return statusOf(d)
      },
      'services.stop': async (params) => {
        await this.stopService(params.name)
        return { stopped: params.name }
      }
    }
  }
}

function statusOf (d: Deployment, withEvents = false): Record<string, unknown> {
  return {
    name: d.spec.name,
    url: d.gateway.url,
    size: d.size,
    ready: d.ready().length,
    replicas: d.pool
      .list()
      .map(r => ({
        id: r.id,
        provider: r.provider.toString(),
        region: r.region,
        state: r.state,
        ...(r.ewmaMs != null ? { ewmaMs: r.ewmaMs } : {}),
        inflight: r.inflight,
        served: r.served,
        failed: r.failed,
        since: r.since
      })),
    gateway: { ...d.gateway.stats, inflight: d.gateway.inflightNow },
    ...(withEvents ? { events: d.events.slice(-50) as Array<DeploymentEvent & { at: number }> } : {})
  }
}

export function deploymentsService (init: DeploymentsInit = {}): (components: DeploymentsComponents) => Deployments {
  return (components) => new Deployments(components, init)
}
