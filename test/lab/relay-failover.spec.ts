/**
 * Issue 37 item 5, red team: a relay is a place for a liar to stand, and it can only drop or
 * delay (TLS runs end to end over its circuits). A NAT'd provider and a NAT'd renter both
 * reserve on two relays (the two bootstraps); one relay then stalls (SIGSTOP: connections
 * open, nothing moves) or dies (SIGKILL). Each costs a failover, never the job: every job is
 * submitted with one attempt and must complete. Needs root and nftables (as the NAT lab).
 */
import { strict as assert } from 'node:assert'
import { waitFor, recordAttack, type NodeProcess } from '../utils/index.js'
import { readyToTrade, said, statusOf, useNatNetwork } from './nat-network.js'
import { submitJob } from '../exec/fixtures.js'

describe('NAT lab red team: a relay that stalls or dies costs a failover, never a job (issue 37)', function () {
  this.timeout(300_000)
  const net = useNatNetwork('# each bootstrap relays with the default limits\n', { relays: 2 })

  /** Waits until `node` holds relayed addresses through both relays. */
  async function reservedOnBoth (node: NodeProcess): Promise<void> {
    const relays = net.relays().map(r => r.peerId)
    await waitFor(async () => {
      const { reachability } = await statusOf(node)
      return relays.every(id => reachability.addrs.some(a => a.includes(`/p2p/${id}/p2p-circuit`)))
    }, { timeoutMs: 40_000, intervalMs: 1_000, what: `${node.role} reserved on both relays` })
  }

  for (const fault of ['stalls', 'dies'] as const) {
    it(`a relay ${fault} after both peers reserved on it: the job between two NAT'd homes completes through the other`, async () => {
      const provider = await net.start('provider', l => l.homes[0].hosts[0])
      const renter = await net.start('renter', l => l.homes[1].hosts[0])
      const relay = net.relays()[0]
      try {
        await Promise.all([reservedOnBoth(provider), reservedOnBoth(renter)])
        // the job must travel through the relay that stays up
        await readyToTrade(provider, renter, net.relays())
        relay.child.kill(fault === 'stalls' ? 'SIGSTOP' : 'SIGKILL')
        const started = Date.now()
        const got = await submitJob(renter.dataDir, net.dir(), 'job.yaml', ['--max-attempts', '1'])
        const ms = Date.now() - started
        recordAttack({ issue: '37.5', attack: `one of two relays ${fault === 'stalls' ? 'stalls (SIGSTOP)' : 'dies (SIGKILL)'} before a job between two NAT'd homes`, got: `job ${String(got.summary.status)} in ${ms} ms, one attempt`, limit: 'two reservations per NAT\'d node; the job itself takes a direct path' })
        assert.equal(got.summary.status, 'ok', said(got))
        assert.equal(got.summary.provider, provider.peerId)
      } finally {
        if (fault === 'stalls') relay.child.kill('SIGCONT')
        await Promise.all([provider.stop('SIGTERM', 5_000), renter.stop('SIGTERM', 5_000)])
      }
    })
  }
})
