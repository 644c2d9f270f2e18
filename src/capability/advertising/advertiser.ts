/**
 * The provider's advertiser: keeps its signed capability record in the DHT and its index
 * keys provided. It publishes once the node is up, refreshes well before expiry (half the
 * record lifetime), and on a profile change bumps the sequence and republishes at once.
 * Every DHT operation runs under its own AbortSignal timeout, with bounded retries
 * (dht-publish.ts); its options, events and interface are in advertiser-api.ts.
 */

import { setMaxListeners } from 'node:events'
import { serviceCapabilities } from '@libp2p/interface'
import { recordAddresses } from '../../node/index.js'
import { SERVICE_STOPPED, sleep } from '../../common/index.js'
import { describeRecord } from '../discovery/discovery.js'
import { groupGpus, type DetectedGpu, type GpuGroup } from '../gpu/gpu.js'
import { indexKeyText, recordIndexKeys } from '../discovery/index-keys.js'
import { providerProfile, type ProviderProfile } from '../policy/profile.js'
import { buildCapabilityRecord, openCapabilityRecord, sealCapabilityRecord } from '../record/record.js'
import { capabilityKeyText } from '../record/record-key.js'
import { serveCapabilityRecord } from '../record/record-fetch.js'
import { PROTOCOL } from '../../../protocols/ids.js'
import { CAPACITY_SERVICE, type CapacitySource } from '../gpu/capacity.js'
import { CAPABILITY_CAPABILITY, DEFAULT_RECORD_TTL_MS, type AdvertiserInit, type CapabilityAdvertiser, type CapabilityAdvertiserEvents, type PublishReport } from './advertiser-api.js'
import { DhtPublisher } from './dht-publish.js'
import {
  ADDRESS_WAIT_MS, EARLY_REPUBLISH_MS, HELD_DATASETS_DELAY_MS, HELD_DATASETS_MIN_GAP_MS, K_PEERS, RETRY_ROUND_AFTER_MS
} from './advertiser-timing.js'
import type { CapabilityRecord } from '../../../protocols/capability.js'
import { CONTROL_HANDLERS, type ControlHandler } from '../../control/index.js'
import type { Signed } from '../../identity/index.js'
import type { ComponentLogger, Ed25519PrivateKey, Libp2pEvents, Logger, PeerId, PrivateKey, Startable, TypedEventTarget } from '@libp2p/interface'
import type { AddressManager, Registrar } from '@libp2p/interface-internal'
import type { KadDHT, SingleKadDHT } from '@libp2p/kad-dht'

export { CAPABILITY_SERVICE, CAPABILITY_CAPABILITY, DEFAULT_RECORD_TTL_MS } from './advertiser-api.js'
export type { AdvertiserInit, CapabilityAdvertiser, CapabilityAdvertiserEvents, PublishReport } from './advertiser-api.js'

interface AdvertiserComponents {
  peerId: PeerId
  privateKey: PrivateKey
  dht: KadDHT
  logger: ComponentLogger
  addressManager: AddressManager
  registrar: Registrar
  events: TypedEventTarget<Libp2pEvents>
  /** the provider's slots and input cache, when the node has them (its public inputs go in the record) */
  [CAPACITY_SERVICE]?: CapacitySource
}

class Advertiser implements CapabilityAdvertiser, Startable {
  readonly [serviceCapabilities] = [CAPABILITY_CAPABILITY]
  readonly events = new EventTarget() as TypedEventTarget<CapabilityAdvertiserEvents>
  private readonly components: AdvertiserComponents
  private readonly init: Required<Omit<AdvertiserInit, 'runner' | 'gpuCheck'>> & Pick<AdvertiserInit, 'runner' | 'gpuCheck'>
  private growthTimer?: NodeJS.Timeout
  private gpuTimer?: NodeJS.Timeout
  private readonly log: Logger
  private readonly dhtPublish: DhtPublisher
  private currentProfile: ProviderProfile
  private sequence = 0n
  private record?: Signed<CapabilityRecord>
  private published?: PublishReport
  /** kad-dht routing table size at the last publish round */
  private tableAtRound = K_PEERS
  private timer?: NodeJS.Timeout
  private heldTimer?: NodeJS.Timeout
  private heldRepublishedAt = 0
  private unwatchHeld?: () => void
  private running = false
  private abort = new AbortController()
  /** publish rounds run one at a time; a request during a round runs once after it */
  private inFlight?: Promise<PublishReport | undefined>
  private pending = false
  /** until then, a record without listen addresses is not published (ADDRESS_WAIT_MS) */
  private addressWaitUntil = 0
  private readonly onConnect = (): void => {
    // until a round has reached the network, a new connection is a reason to try again (a
    // round in flight retries on its own)
    if (this.published == null && this.running && this.inFlight == null && !this.waitingForAddresses()) {
      void this.publishSoon()
    }
  }

  /** our listen addresses are part of the record: a change is a new record */
  private readonly onSelfUpdate = (): void => {
    if (!this.running || this.record == null) return
    const now = this.listenAddrs().map(a => a.join(','))
    const was = this.record.message.listenAddrs.map(a => a.join(','))
    if (now.length === was.length && now.every((a, i) => a === was[i])) return
    this.seal(true)
    // the round scheduled for when the addresses came (afterStart) is this one
    if (this.published == null && this.inFlight == null) clearTimeout(this.timer)
    void this.publishSoon()
  }

  /** A changed GPU set (model, memory, count) is a new profile; a failed detection changes nothing. */
  private async checkGpus (detect: () => Promise<DetectedGpu[]>): Promise<void> {
    let gpus: DetectedGpu[]
    try {
      gpus = await detect()
    } catch (err) {
      this.log('GPU re-detection failed, keeping the advertised GPUs: %e', err)
      return
    }
    const shape = (groups: GpuGroup[]): string => JSON.stringify(groups.map(g => [g.modelKey, g.vramMib, g.count]))
    if (gpus.length === 0 || !this.running || shape(groupGpus(gpus)) === shape(this.currentProfile.groups)) return
    this.log('GPUs changed: republishing')
    await this.update(providerProfile(this.currentProfile.policy, gpus))
  }

  constructor (components: AdvertiserComponents, init: AdvertiserInit) {
    this.components = components
    this.init = {
      profile: init.profile,
      recordTtlMs: init.recordTtlMs ?? DEFAULT_RECORD_TTL_MS,
      refreshFraction: init.refreshFraction ?? 0.5,
      attempts: init.attempts ?? 5,
      operationTimeoutMs: init.operationTimeoutMs ?? 45_000,
      retryDelayMs: init.retryDelayMs ?? 500,
      earlyRepublishMs: init.earlyRepublishMs ?? EARLY_REPUBLISH_MS,
      runner: init.runner,
      gpuCheck: init.gpuCheck
    }
    this.currentProfile = init.profile
    this.log = components.logger.forComponent('idlegrid:capability')
    this.dhtPublish = new DhtPublisher({
      dht: () => this.components.dht,
      peerId: components.peerId,
      log: this.log,
      operationTimeoutMs: this.init.operationTimeoutMs,
      retryDelayMs: this.init.retryDelayMs,
      attempts: this.init.attempts,
      abortSignal: () => this.abort.signal,
      running: () => this.running
    })
  }

  async start (): Promise<void> {
    if (this.components.privateKey.type !== 'Ed25519') throw new Error('the capability advertiser needs an Ed25519 node key')
    this.running = true
    this.abort = new AbortController()
    setMaxListeners(Infinity, this.abort.signal)
    this.seal(true)
    // renters that found us under an index key ask us for the record directly
    await serveCapabilityRecord(this.components.registrar, () => this.servedEnvelope(), this.log)
    const check = this.init.gpuCheck
    if (check != null) {
      this.gpuTimer = setInterval(() => { void this.checkGpus(check.detect) }, check.intervalMs)
      this.gpuTimer.unref()
    }
  }

  afterStart (): void {
    // the node reaches its bootstrap peers asynchronously: publish now and again on the
    // first connection if nobody could be reached yet
    this.components.events.addEventListener('peer:connect', this.onConnect)
    this.components.events.addEventListener('self:peer:update', this.onSelfUpdate)
    this.unwatchHeld = this.capacity()?.onAdvertisedInputsChange?.(this.onHeldDatasets)
    this.seal(true)
    this.addressWaitUntil = Date.now() + ADDRESS_WAIT_MS
    if (!this.waitingForAddresses()) void this.publishSoon()
    else {
      this.timer = setTimeout(() => { void this.publishSoon() }, ADDRESS_WAIT_MS)
      this.timer.unref()
    }
  }

  /** the current record has no listen address yet, and libp2p may still tell them (ADDRESS_WAIT_MS) */
  private waitingForAddresses (): boolean {
    return (this.record?.message.listenAddrs.length ?? 0) === 0 && Date.now() < this.addressWaitUntil
  }

  async stop (): Promise<void> {
    await this.components.registrar.unhandle(PROTOCOL.capability).catch(() => {})
    this.running = false
    this.abort.abort(SERVICE_STOPPED)
    clearTimeout(this.timer)
    clearInterval(this.gpuTimer)
    clearInterval(this.growthTimer)
    clearTimeout(this.heldTimer)
    this.unwatchHeld?.()
    this.components.events.removeEventListener('peer:connect', this.onConnect)
    this.components.events.removeEventListener('self:peer:update', this.onSelfUpdate)
  }

  profile (): ProviderProfile {
    return this.currentProfile
  }

  current (): Signed<CapabilityRecord> {
    if (this.record == null) this.seal(true)
    return this.record as Signed<CapabilityRecord>
  }

  /** what `/idlegrid/cap/1.0.0` answers: the current record, re-signed if it is about to expire */
  private servedEnvelope (): Uint8Array {
    if (
      this.record == null ||
      Number(this.record.message.expiresAt) - Date.now() < Math.min(60_000, this.init.recordTtlMs / 4)
    ) {
      this.seal(false)
    }
    return (this.record as Signed<CapabilityRecord>).envelope
  }

  lastPublished (): PublishReport | undefined {
    return this.published
  }

  publishing (): boolean {
    return this.inFlight != null
  }

  async update (profile: ProviderProfile): Promise<PublishReport | undefined> {
    this.currentProfile = profile
    this.seal(true)
    this.events.dispatchEvent(new CustomEvent('change', { detail: profile }))
    return await this.publishSoon()
  }

  async republish (): Promise<PublishReport | undefined> {
    return await this.publishSoon()
  }

  [CONTROL_HANDLERS] (): Record<string, ControlHandler> {
    return {
      'capability.record': async () => {
        const verified = openCapabilityRecord(this.current().envelope, { peerId: this.components.peerId })
        const p = this.published
        return {
          key: capabilityKeyText(this.components.peerId),
          record: describeRecord(verified, Date.now()),
          indexKeys: recordIndexKeys(verified.message).map(indexKeyText),
          published:
            p == null
              ? null
              : {
                  sequence: p.sequence.toString(),
                  stored: p.stored,
                  provided: p.provided,
                  wanted: p.wanted,
                  at: p.at
                }
        }
      },
      'capability.republish': async () => {
        const p = await this.republish()
        return p == null
          ? { published: false }
          : {
              published: true,
              sequence: p.sequence.toString(),
              stored: p.stored,
              provided: p.provided,
              wanted: p.wanted
            }
      }
    }
  }

  /** Builds and signs a record; a new sequence when the content changed (or at first). */
  private seal (bump: boolean): void {
    const now = Date.now()
    if (bump || this.sequence === 0n) {
      // time-based, so a restarted provider continues above its earlier sequence numbers
      this.sequence = BigInt(now) > this.sequence ? BigInt(now) : this.sequence + 1n
    }
    const listenAddrs = this.listenAddrs()
    const record = buildCapabilityRecord(this.currentProfile, {
      peerId: this.components.peerId,
      sequence: this.sequence,
      issuedAt: now,
      ttlMs: this.init.recordTtlMs,
      listenAddrs,
      runner: this.init.runner,
      heldDatasets: this.capacity()?.advertisedInputs?.() ?? []
    })
    this.record = sealCapabilityRecord(this.components.privateKey as Ed25519PrivateKey, this.components.peerId, record)
  }

  /** The capacity service, where the node has one (libp2p's components throw for a service that is not there). */
  private capacity (): CapacitySource | undefined {
    try { return this.components[CAPACITY_SERVICE] } catch { return undefined }
  }

  /** A public input entered or left the cache: the record names it after a short pause (many may come together). */
  private readonly onHeldDatasets = (): void => {
    if (this.heldTimer != null || !this.running) return
    const delay = Math.max(HELD_DATASETS_DELAY_MS, this.heldRepublishedAt + HELD_DATASETS_MIN_GAP_MS - Date.now())
    this.heldTimer = setTimeout(() => {
      this.heldTimer = undefined
      this.heldRepublishedAt = Date.now()
      if (this.running) void this.update(this.currentProfile).catch(err => { this.log('republishing after a cache change failed: %e', err) })
    }, delay)
    this.heldTimer.unref()
  }

  /**
   * Addresses we can be dialled on, binary, without /p2p: public or relayed ones once there are any
   * (recordAddresses)
   */
  private listenAddrs (): Uint8Array[] {
    return recordAddresses(this.components.addressManager.getAddresses())
  }

  private async publishSoon (): Promise<PublishReport | undefined> {
    if (!this.running) return undefined
    if (this.inFlight != null) {
      this.pending = true
      return await this.inFlight
    }
    this.inFlight = (async () => {
      let report: PublishReport | undefined
      try {
        do {
          this.pending = false
          report = await this.publishRound()
        } while (this.pending && this.running)
      } finally {
        this.inFlight = undefined
        this.schedule(report != null)
      }
      return report
    })()
    return await this.inFlight
  }

  private schedule (ok: boolean): void {
    clearTimeout(this.timer)
    if (!this.running) return
    // refresh well before expiry; after a failed round, try again sooner
    const refresh = this.init.recordTtlMs * this.init.refreshFraction
    const delay = Math.max(1_000, Math.round(ok ? refresh : Math.min(refresh / 4, RETRY_ROUND_AFTER_MS)))
    this.timer = setTimeout(() => { void this.publishSoon() }, delay)
    this.timer.unref()
  }

  /** One round: re-sign with a fresh expiry, put, provide every index key; retried with backoff. */
  private async publishRound (): Promise<PublishReport | undefined> {
    let delay = this.init.retryDelayMs
    for (let attempt = 1; attempt <= this.init.attempts && this.running; attempt++) {
      this.seal(false)
      const { message: record, envelope: value } = this.record as Signed<CapabilityRecord>
      try {
        const t0 = Date.now()
        const stored = await this.dhtPublish.put(value)
        this.log('put seq %s: %d peers acknowledged in %d ms', record.sequence, stored, Date.now() - t0)
        if (stored > 0) {
          const t1 = Date.now()
          const { provided, wanted } = await this.dhtPublish.provideIndexKeys(record)
          this.log('provided %d/%d index keys in %d ms', provided, wanted, Date.now() - t1)
          this.watchGrowth(this.routingTableSize())
          const report: PublishReport = { sequence: record.sequence, stored, provided, wanted, at: Date.now() }
          this.published = report
          this.log('published capability record seq %s to %d peers, %d/%d index keys', record.sequence, stored, provided, wanted)
          this.events.dispatchEvent(new CustomEvent('published', { detail: report }))
          return report
        }
        this.log('capability record reached no peer (attempt %d/%d)', attempt, this.init.attempts)
      } catch (err) {
        if (!this.running) return undefined
        this.log('capability publish attempt %d/%d failed: %e', attempt, this.init.attempts, err)
      }
      await sleep(delay, this.abort.signal)
      delay *= 2
    }
    return undefined
  }

  /** After a round that saw under k peers: publish again once the table has grown by half (EARLY_REPUBLISH_MS). */
  private watchGrowth (table: number): void {
    this.tableAtRound = table
    clearInterval(this.growthTimer)
    this.growthTimer = undefined
    if (table >= K_PEERS || !this.running) return
    this.growthTimer = setInterval(() => {
      const now = this.routingTableSize()
      if (this.inFlight == null && now >= Math.max(this.tableAtRound + 1, this.tableAtRound * 1.5)) {
        this.log('routing table grew from %d to %d peers since the last round: publishing again', this.tableAtRound, now)
        void this.publishSoon()
      }
    }, this.init.earlyRepublishMs)
    this.growthTimer.unref()
  }

  /** peers in kad-dht's routing table (a field of kad-dht's service object, not of its interface) */
  private routingTableSize (): number {
    return (this.components.dht as Partial<SingleKadDHT>).routingTable?.size ?? K_PEERS
  }
}

/** The advertiser service (libp2p factory pattern), named CAPABILITY_SERVICE; only providers run it. */
export function capabilityAdvertiser (
  init: AdvertiserInit
): (components: AdvertiserComponents) => CapabilityAdvertiser {
  return (components) => new Advertiser(components, init)
}
