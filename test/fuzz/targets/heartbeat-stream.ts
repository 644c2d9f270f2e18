/**
 * The heartbeat stream's receiving side (src/node/presence/heartbeat-stream.ts) with the real heartbeat
 * rules (heartbeat.ts): a mutated frame as it comes off /idlegrid/heartbeat/1.0.0, from the
 * provider's connection. The judgement answers with a verdict and must never throw.
 */
import { defaultLogger } from '@libp2p/logger'
import { MAX_HEARTBEAT_FRAME_BYTES, HeartbeatInbox } from '../../../src/node/presence/heartbeat-stream.js'
import { heartbeatService } from '../../../src/node/presence/heartbeat.js'
import { DOMAIN } from '../../../protocols/ids.js'
import { fixtures } from '../fixtures.js'
import { bytesInput } from '../mutate.js'
import { NotAccepted, VerdictError, type FuzzTarget, type TargetFactory } from '../target.js'
import type { OpenedEnvelope } from '../../../src/identity/index.js'
import type { GossipVerdict } from '../../../src/node/gossip.js'

const NAME = 'stream/heartbeat'

export const heartbeatStreamTargets: TargetFactory[] = [{
  name: NAME,
  build: async () => {
    const fx = await fixtures()
    const logger = defaultLogger()
    const me = fx.other
    const registrar: any = { handle: async () => {}, unhandle: async () => {} }
    const router: any = { setValidator () {}, onMessage () { return () => {} } }
    const service = heartbeatService({ role: 'renter', intervalMs: 10_000, privateKey: me.key })({ peerId: me.peerId, pubsub: {} as any, gossip: router, logger, registrar, connectionManager: { getConnections: () => [] } as any, events: new EventTarget() as any })
    await (service as any).start()
    // the service's own receiver (its rules and its record), reached as the stream reaches it
    const receive = (envelope: OpenedEnvelope): GossipVerdict => (service as any).receive(envelope)
    const inbox = new HeartbeatInbox({ rateLimit: { perSecond: 1e9, burst: 1e9 }, log: logger.forComponent('fuzz') })
    return {
      name: NAME,
      what: 'heartbeat stream frame: envelope, signer = sender, heartbeat rules',
      typed: [NotAccepted],
      arbitrary: bytesInput(fx.envelopes[DOMAIN.heartbeat] ?? [], { maxBytes: MAX_HEARTBEAT_FRAME_BYTES + 64 }),
      async: false,
      weight: 1,
      run: (input: Uint8Array) => {
        const verdict = inbox.judge(input, fx.provider.peerId, receive)
        if (verdict == null || !['accept', 'ignore', 'reject'].includes(verdict.action)) throw new VerdictError(`not a verdict: ${JSON.stringify(verdict)}`)
        if (verdict.action !== 'accept') throw new NotAccepted(verdict.action, verdict.reason)
      },
      close: async () => { await (service as any).stop() }
    } satisfies FuzzTarget
  }
}]
