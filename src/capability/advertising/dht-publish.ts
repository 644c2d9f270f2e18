/**
 * The advertiser's DHT writes: the record put, counting only the peers that stored it, and the
 * record's index keys provided a few at a time with retries; keys the record no longer
 * matches stop being reprovided. Each operation runs under its own timeout and the
 * advertiser's abort signal.
 */

import { sleep } from '../../common/index.js'
import { indexCid, indexKeyText, recordIndexKeys, type IndexKey } from '../discovery/index-keys.js'
import { capabilityKey } from '../record/record-key.js'
import type { CapabilityRecord } from '../../../protocols/capability.js'
import type { Logger, PeerId } from '@libp2p/interface'
import type { KadDHT } from '@libp2p/kad-dht'

export interface DhtPublisherInit {
  /** the node's DHT, read when used (a service's components may not hold it yet at construction) */
  dht: () => KadDHT
  peerId: PeerId
  log: Logger
  /** bound on one put or provide */
  operationTimeoutMs: number
  /** first retry delay of a key that reached nobody, doubled each time */
  retryDelayMs: number
  /** attempts per publish round (index keys get at most 3 of them) */
  attempts: number
  /** the advertiser's abort signal now (a new one after each start) */
  abortSignal: () => AbortSignal
  /** whether the advertiser still runs */
  running: () => boolean
}

export class DhtPublisher {
  private readonly init: DhtPublisherInit
  /** index keys provided so far, by their text */
  private readonly provided = new Map<string, IndexKey>()

  constructor (init: DhtPublisherInit) {
    this.init = init
  }

  private signal (): AbortSignal {
    return AbortSignal.any([this.init.abortSignal(), AbortSignal.timeout(this.init.operationTimeoutMs)])
  }

  /** Puts the record; resolves with how many peers confirmed storing it. */
  async put (value: Uint8Array): Promise<number> {
    let stored = 0
    const signal = this.signal()
    try {
      for await (const event of this.init.dht().put(capabilityKey(this.init.peerId), value, { signal })) {
        if (event.name === 'PEER_RESPONSE' && event.messageName === 'PUT_VALUE') stored++
        // a peer that answered but did not store our value: kad-dht follows its response with this error
        if (event.name === 'QUERY_ERROR' && /not put correctly/i.test(event.error.message)) stored--
      }
    } catch (err) {
      // out of time: the peers reached so far hold the record, which is enough for this round
      if (!signal.aborted || stored <= 0 || this.init.abortSignal().aborted) throw err
    }
    return Math.max(0, stored)
  }

  /** Provides every index key of the record; stops reproviding keys it no longer matches. */
  async provideIndexKeys (record: CapabilityRecord): Promise<{ provided: number, wanted: number }> {
    const keys = recordIndexKeys(record)
    const wanted = new Map(keys.map(k => [indexKeyText(k), k]))
    for (const [text, key] of this.provided) {
      if (wanted.has(text)) continue
      this.provided.delete(text)
      await this.init.dht().cancelReprovide(indexCid(key), { signal: this.signal() }).catch(() => {})
    }
    // a few at a time: each provide is a DHT walk plus one message per close peer. A key that
    // reached nobody is tried again (backoff, 3 tries in all): otherwise it stayed unprovided
    // until the next round, half a record lifetime later (bench under load: a provider with 1 of
    // 5 keys provided was missing from every query on the others)
    let queue = [...wanted.entries()]
    let provided = 0
    let delay = this.init.retryDelayMs
    for (let attempt = 1; queue.length > 0 && this.init.running(); attempt++) {
      const failed: Array<[string, IndexKey]> = []
      const pending = [...queue]
      await Promise.all(Array.from({ length: Math.min(4, pending.length) }, async () => {
        for (let next = pending.shift(); next != null && this.init.running(); next = pending.shift()) {
          if (await this.provideOne(next[0], next[1])) {
            provided++
            this.provided.set(next[0], next[1])
          } else failed.push(next)
        }
      }))
      queue = failed
      if (queue.length === 0 || attempt >= Math.min(3, this.init.attempts)) break
      await sleep(delay, this.init.abortSignal()).catch(() => {})
      delay *= 2
    }
    return { provided, wanted: wanted.size }
  }

  /** Provides one index key; true when at least one peer took it. */
  private async provideOne (text: string, key: IndexKey): Promise<boolean> {
    let reached = 0
    const signal = this.signal()
    try {
      for await (const event of this.init.dht().provide(indexCid(key), { signal })) {
        if (event.name === 'PEER_RESPONSE' && event.messageName === 'ADD_PROVIDER') reached++
      }
    } catch (err) {
      if (!signal.aborted || reached === 0) {
        this.init.log('provide %s failed: %e', text, err)
        return false
      }
    }
    return reached > 0
  }
}
