/**
 * A deployment keeps a service at its size. Each wanted replica is a slot with its own loop:
 * auction a lease (the submit room's auction rounds), ship the service to the winner (exec's
 * runAttempt, the job stream held open for the whole lease), probe its health through the
 * serve protocol until it answers, put it in the gateway's pool; when the run ends for any
 * reason (the service died or failed its health checks, a preemption, the provider left, the
 * lease ran out) take it out of the pool and auction a replacement, away from providers that
 * just let it down. The slots auction one at a time and away from the providers hosting the
 * deployment's other replicas while any other can serve: one outage takes one replica.
 */
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { sleep, toHex } from '../common/index.js'
import { runAttempt, type JobPayload } from '../exec/index.js'
import { peerIdFromBytes, openAward, type MarketRenterService } from '../market/index.js'
import { auctionRounds } from '../submit/index.js'
import { isForwardError } from './errors.js'
import { forward, type Dialer } from './forward.js'
import { Gateway } from './gateway.js'
import { ServeStreamPool } from './stream-pool.js'
import { noteDraining, ReplicaPool, type Replica } from './router.js'
import { leaseJobSpec, UNTIL_STOPPED_MS, type ServiceSpec } from './service-file.js'
import { UsageCounter, type UsageDesk } from './usage/index.js'
import type { Signed } from '../identity/index.js'
import type { Receipt } from '../../protocols/job.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

export interface DeploymentDeps {
  dialer: Dialer
  market: Pick<MarketRenterService, 'auction'>
  privateKey: Ed25519PrivateKey
  peerId: PeerId
  /** replicas' logs go under baseDir/<lease id>/ */
  baseDir: string
  onReceipt?: (receipt: Signed<Receipt>) => void
  /** health probe interval through the serve protocol (default 1 s) */
  probeMs?: number
  /** first pause after an auction without award; doubles up to 10 s (default 1 s) */
  retryMs?: number
  /**
   * health probes in a row that get nothing at all back from a replica's provider (no stream,
   * no frame in time) before the replica is given up and replaced (default 3): a provider that
   * froze or lost its network keeps the job stream open, and waiting for that to time out took
   * ~95 s; a provider that answers, even with an error, is not given up this way
   */
  silentProbes?: number
  /** meters each replica's usage for its provider's statements (src/serve/usage) */
  usage?: UsageDesk
}

/** How long a replica's usage account stays open after its run ended: for its provider's last statement. */
const USAGE_CLOSE_DELAY_MS = 60_000

export type DeploymentEvent =
  | { type: 'auction', slot: number, region: string }
  | { type: 'no-award', slot: number, detail: string }
  | { type: 'replica-started', slot: number, id: string, provider: string }
  | { type: 'replica-ready', slot: number, id: string, provider: string }
  /** drained: the gateway had taken it out of rotation (the provider said it was stopping) before its run ended */
  | { type: 'replica-ended', slot: number, id: string, provider: string, outcome: string, detail?: string, drained: boolean }
  /** its provider stopped answering at all: the replica is given up now, and replaced */
  | { type: 'replica-silent', slot: number, id: string, provider: string, probes: number }

interface Slot { index: number, region: string, abort: AbortController, done: Promise<void> }

/** Events kept for `status`. */
const MAX_EVENTS = 200
/** Providers a slot avoids after they let a replica down. */
const MAX_EXCLUDED = 8

export class Deployment {
  readonly pool: ReplicaPool
  readonly gateway: Gateway
  /** the health probes' own streams: their frame bound is the probe's, not the gateway's */
  private readonly probeStreams: ServeStreamPool
  readonly events: Array<DeploymentEvent & { at: number }> = []
  readonly startedAt = Date.now()
  private slots: Slot[] = []
  private nextSlot = 0
  private stopped = false
  private readonly listeners = new Set<(e: DeploymentEvent) => void>()
  /** what the gateway counted through each replica (lease id hex) */
  private readonly counters = new Map<string, UsageCounter>()
  /** the provider each slot's replica was awarded to, while it runs */
  private readonly hosts = new Map<number, string>()
  /** the slots' auctions run one at a time: see `auctionTurn` */
  private lastTurn: Promise<void> = Promise.resolve()

  constructor (
    readonly spec: ServiceSpec,
    private readonly payload: JobPayload,
    private readonly deps: DeploymentDeps
  ) {
    this.pool = new ReplicaPool(spec.limits.maxInflightPerReplica)
    this.gateway = new Gateway(deps.dialer, this.pool, {
      port: spec.gateway.port,
      bind: spec.gateway.bind,
      token: spec.gateway.token,
      maxBodyBytes: spec.limits.maxBodyBytes,
      timeoutMs: spec.limits.timeoutMs,
      meter: id => this.counters.get(id)
    })
    this.probeStreams = new ServeStreamPool(deps.dialer, Math.max(2_000, (deps.probeMs ?? 1_000) * 2), {
      maxIdlePerProvider: 1
    })
  }

  /** The payload every replica gets: the service's runtime, its lease length as time limit, its files. */
  static payload (spec: ServiceSpec, inputs: JobPayload['inputs']): JobPayload {
    return {
      runtime: {
        image: spec.runtime.image,
        command: spec.runtime.command,
        env: spec.runtime.env,
        timeoutMs: spec.leaseMs === 0 ? UNTIL_STOPPED_MS : spec.leaseMs,
        shmSizeMiB: spec.runtime.shmSizeMiB
      },
      inputs
    }
  }

  async start (): Promise<string> {
    const url = await this.gateway.start()
    this.scale(this.spec.replicas.length)
    return url
  }

  get size (): number {
    return this.slots.length
  }

  onEvent (fn: (e: DeploymentEvent) => void): () => void {
    this.listeners.add(fn)
    return () => { this.listeners.delete(fn) }
  }

  /** Adds or stops slots to reach `n` replicas (new slots take the file's regions in turn). */
  scale (n: number): void {
    if (this.stopped) return
    while (this.slots.length < n) {
      const index = this.nextSlot++
      const region = this.spec.replicas[this.slots.length % this.spec.replicas.length]?.region ?? ''
      const abort = new AbortController()
      const slot: Slot = { index, region, abort, done: Promise.resolve() }
      slot.done = this.runSlot(slot).catch(() => {})
      this.slots.push(slot)
    }
    for (const slot of this.slots.splice(n)) slot.abort.abort()
  }

  async stop (): Promise<void> {
    this.stopped = true
    const slots = this.slots.splice(0)
    for (const slot of slots) slot.abort.abort()
    await Promise.all(slots.map(async s => { await s.done }))
    await this.gateway.stop()
    this.probeStreams.close()
  }

  /** Replicas ready to take requests. */
  ready (): Replica[] {
    return this.pool.list().filter(r => r.state === 'ready')
  }

  private emit (e: DeploymentEvent): void {
    this.events.push({ ...e, at: Date.now() })
    if (this.events.length > MAX_EVENTS) this.events.splice(0, this.events.length - MAX_EVENTS)
    for (const fn of this.listeners) { try { fn(e) } catch {} }
  }

  private leaseOver (): boolean {
    return this.spec.leaseMs > 0 && Date.now() - this.startedAt >= this.spec.leaseMs
  }

  /**
   * Waits for the previous slot's auction to end; returns the release. Two auctions at once (a
   * deployment's start) would both award the best provider, which can start only one of them:
   * one at a time, each knows where the others went.
   */
  private async auctionTurn (): Promise<() => void> {
    const previous = this.lastTurn
    let release: () => void = () => {}
    this.lastTurn = new Promise<void>(resolve => { release = resolve })
    await previous
    return release
  }

  private async runSlot (slot: Slot): Promise<void> {
    const signal = slot.abort.signal
    const excluded: string[] = []
    let pause = this.deps.retryMs ?? 1_000
    // replicas go to providers that host none of this deployment's others, while there are such
    let spread = true
    while (!signal.aborted && !this.leaseOver()) {
      const jobId = new Uint8Array(randomBytes(16))
      this.emit({ type: 'auction', slot: slot.index, region: slot.region })
      let awarded
      let award
      let provider
      const release = await this.auctionTurn()
      const others = spread ? [...this.hosts].filter(([i]) => i !== slot.index).map(([, p]) => p) : []
      try {
        if (signal.aborted) return
        awarded = await auctionRounds(this.deps.market, leaseJobSpec(this.spec, slot.region), { jobId }).next({
          exclude: [...excluded, ...others],
          attempt: 1,
          signal
        })
        // opened once: it verifies the renter's own signature again
        award = openAward(awarded.award).message
        provider = peerIdFromBytes(award.winner)
        this.hosts.set(slot.index, provider.toString())
      } catch (err: any) {
        if (signal.aborted) return
        this.emit({ type: 'no-award', slot: slot.index, detail: String(err?.message ?? err) })
        // no provider left beside the others' hosts: share one rather than stay short
        if (others.length > 0) spread = false
        await sleep(pause, signal)
        pause = Math.min(pause * 2, 10_000)
        continue
      } finally {
        release()
      }
      pause = this.deps.retryMs ?? 1_000
      spread = true
      const id = toHex(jobId)
      const probing = new AbortController()
      // the probes end the attempt when its provider goes silent (probe: silentProbes)
      const givenUp = new AbortController()
      const result = await runAttempt(awarded, this.payload, {
        libp2p: this.deps.dialer,
        privateKey: this.deps.privateKey,
        peerId: this.deps.peerId,
        dir: join(this.deps.baseDir, id),
        // a service logs for its whole lease: more room than a batch job's default
        limits: { maxLogBytes: 256 * 1024 * 1024, maxJobDiskBytes: 1024 * 1024 * 1024 },
        signal: AbortSignal.any([signal, givenUp.signal]),
        onEvent: (e) => {
          if (e.type !== 'accepted') return
          const replica = this.pool.add({ id, leaseId: jobId, provider, region: slot.region })
          this.meter(jobId, provider, Number(award.clearingPriceMicroUsd))
          this.emit({ type: 'replica-started', slot: slot.index, id, provider: e.provider })
          void this.probe(replica, slot, probing.signal, () => { givenUp.abort() })
        }
      })
      probing.abort()
      this.hosts.delete(slot.index)
      const drained = this.pool.get(id)?.state === 'draining'
      this.pool.remove(id)
      this.unmeter(jobId)
      if (result.receipt != null) this.deps.onReceipt?.(result.receipt)
      this.emit({ type: 'replica-ended', slot: slot.index, id, provider: result.provider, outcome: result.outcome, detail: result.detail, drained })
      // a preempted replica is the tier's contract, not a fault: its provider may host the replacement once free
      if (result.outcome !== 'ok' && result.outcome !== 'preempted') {
        excluded.push(result.provider)
        if (excluded.length > MAX_EXCLUDED) excluded.shift()
      }
    }
  }

  /**
   * Starts metering a replica's usage (one GPU slot at the award's price); the account closes a
   * while after the run ends.
   */
  private meter (leaseId: Uint8Array, provider: PeerId, priceMicroUsdPerGpuHour: number): void {
    const desk = this.deps.usage
    if (desk == null) return
    const counter = new UsageCounter()
    this.counters.set(toHex(leaseId), counter)
    desk.open({ leaseId, provider, gpus: 1, priceMicroUsdPerGpuHour, since: Date.now() }, () => counter)
  }

  private unmeter (leaseId: Uint8Array): void {
    const timer = setTimeout(() => {
      this.counters.delete(toHex(leaseId))
      this.deps.usage?.close(leaseId)
    }, USAGE_CLOSE_DELAY_MS)
    timer.unref()
  }

  /**
   * Health through the serve protocol: ready on the first 2xx; out of rotation after two
   * failures in a row; given up (`giveUp`) after `silentProbes` in a row that its provider did
   * not answer at all.
   */
  private async probe (replica: Replica, slot: Slot, signal: AbortSignal, giveUp: () => void): Promise<void> {
    const every = this.deps.probeMs ?? 1_000
    const silentLimit = this.deps.silentProbes ?? 3
    let failures = 0
    let silent = 0
    while (!signal.aborted) {
      let ok = false
      let answered = true
      try {
        const answer = await forward(this.probeStreams, replica, { method: 'GET', path: this.spec.healthPath, headers: [], body: new Uint8Array() }, { timeoutMs: Math.max(2_000, every * 2) })
        for await (const _ of answer.body) {} // eslint-disable-line no-empty
        ok = answer.response.status >= 200 && answer.response.status < 300
        // a replica its provider is stopping says so: out of rotation now, even one no request reached
        noteDraining(replica, answer.response)
      } catch (err) {
        if (isForwardError(err)) noteDraining(replica, err)
        answered = isForwardError(err) && err.fromProvider
      }
      if (signal.aborted) return
      silent = answered ? 0 : silent + 1
      // two probes in a row with nothing back: out of rotation, and the requests waiting on it go elsewhere
      if (silent >= 2 && !replica.silenced.signal.aborted) {
        replica.state = 'starting'
        replica.silenced.abort()
      }
      if (answered && replica.silenced.signal.aborted) replica.silenced = new AbortController()
      if (silent >= silentLimit) {
        replica.state = 'starting'
        this.emit({ type: 'replica-silent', slot: slot.index, id: replica.id, provider: replica.provider.toString(), probes: silent })
        giveUp()
        return
      }
      if (ok) {
        failures = 0
        if (replica.state === 'starting') {
          replica.state = 'ready'
          this.emit({ type: 'replica-ready', slot: slot.index, id: replica.id, provider: replica.provider.toString() })
        }
      } else if (++failures >= 2 && replica.state === 'ready') {
        replica.state = 'starting'
      }
      await sleep(every, signal)
    }
  }
}
