import * as assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { isJobShardTopic, jobShardTopic, TOPIC } from '../../protocols/ids.js'
import { sleep } from '../../src/common/index.js'
import { BIN_PATH, startLocalNetwork, tempDir, waitForMesh, type LocalNetwork } from '../utils/index.js'

function isRunning (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('a network of separate processes on 127.0.0.1', function () {
  this.timeout(120_000)
  let dir: Awaited<ReturnType<typeof tempDir>>
  let network: LocalNetwork | undefined

  before(async () => {
    dir = await tempDir()
    network = await startLocalNetwork({ baseDir: dir.path, providers: 2, renters: 1, heartbeatSeconds: 1 })
  })

  after(async () => {
    await network?.stop()
    await dir.cleanup()
  })

  it('bootstrap, two providers and a renter find each other within a bounded time', async () => {
    assert.ok(network != null)
    let view = await waitForMesh(network.all, 45_000)
    // a connection comes before the peers' topic subscriptions reach each other: the shard
    // views complete within a bound of their own (seen 2 of 3 on a loaded machine)
    const anyShard = jobShardTopic('any', 0)
    const servingCount = network.all.length - network.renters.length
    const shardViewsComplete = (): boolean => view.statuses.every(s => (s.topics[anyShard]?.length ?? 0) >= servingCount - (s.role === 'renter' ? 0 : 1))
    for (const deadline = Date.now() + 20_000; !shardViewsComplete() && Date.now() < deadline;) {
      await sleep(250)
      view = await waitForMesh(network.all, 45_000)
    }
    assert.deepEqual(view.missing, [], 'every node knows every other')
    const servers = [network.bootstrap, ...network.providers].map(n => n.peerId)
    for (const s of view.statuses) {
      // DHT servers find each other; the client-mode renter finds them all but is never a routing entry
      for (const server of servers) if (server !== s.peerId) assert.ok(s.routingTable.includes(server), `${s.role} routes to ${server}`)
      assert.ok(!s.routingTable.includes(network.renters[0].peerId), 'renters stay out of routing tables')
      assert.equal(s.dhtMode, s.role === 'renter' ? 'client' : 'server')
      // gossipsub topic peers: nobody on the legacy ledger and heartbeat topics (off by default:
      // entries travel by announcement and sync, heartbeats on the heartbeat stream); on job shards (market
      // version 2) only the bootstrap and the providers that serve them, never a renter, and on
      // the "any zone, any VRAM" shard that every provider serves, all of them
      const renterIds: Set<string> = new Set<string>(network.renters.map(r => r.peerId as string))
      const servingOthers: number = network.all.length - network.renters.length - (renterIds.has(s.peerId) ? 0 : 1)
      for (const [topic, peers] of Object.entries(s.topics)) {
        if (!isJobShardTopic(topic)) {
          assert.deepEqual(peers, [], `${s.role} sees peers on ${topic}`)
          continue
        }
        assert.ok(peers.every((p: string): boolean => !renterIds.has(p)), `${s.role} sees no renter on ${topic}`)
        if (topic === jobShardTopic('any', 0)) assert.equal(peers.length, servingOthers, `${s.role} sees the bootstrap and every provider on ${topic}`)
      }
    }
  })

  it('every node hears each connected node\'s signed heartbeats on the heartbeat stream, none through gossip', async () => {
    assert.ok(network != null)
    // Each node sends its signed heartbeat to every connected peer on /idlegrid/heartbeat/1.0.0
    // (a network this small is fully connected); every other node must have accepted some.
    const view = await waitForMesh(network.all, 20_000)
    for (const s of view.statuses) {
      const heardFrom = new Set(s.heard.map(h => h.peerId))
      for (const other of network.all) if (other.peerId !== s.peerId) assert.ok(heardFrom.has(other.peerId), `${s.role} heard ${other.role}`)
      assert.ok((s.heartbeats.accept ?? 0) >= network.all.length - 1)
      assert.deepEqual(Object.keys(s.heartbeats).filter(k => k.startsWith('reject:')), [], 'nothing rejected in an honest network')
      assert.equal(s.gossip[TOPIC.heartbeats], undefined, 'a heartbeat went through gossip')
      const roles = Object.fromEntries(s.heard.map(h => [h.peerId, h.role]))
      for (const other of network.all) if (other.peerId !== s.peerId) assert.equal(roles[other.peerId], other.role, 'the signed heartbeat carries the sender\'s role')
    }
  })

  it('idlegrid status on a data directory reports the running node', async () => {
    assert.ok(network != null)
    const renter = network.renters[0]
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [BIN_PATH, 'status', '--json', '--data-dir', renter.dataDir], { timeout: 30_000 }, (err, out) => { err != null ? reject(err) : resolve(out) })
    })
    const status = JSON.parse(stdout.trim())
    assert.equal(status.peerId, renter.peerId)
    assert.equal(status.via, 'running')
    assert.equal(status.peers.length, network.all.length - 1)
  })

  it('SIGTERM ends every process with exit 0 and leaves no process behind', async () => {
    assert.ok(network != null)
    const pids = network.all.map(n => n.child.pid as number)
    const codes = await network.stop()
    network = undefined
    assert.deepEqual(codes, pids.map(() => 0))
    for (const pid of pids) assert.equal(isRunning(pid), false, `pid ${pid} is gone`)
  })
})
