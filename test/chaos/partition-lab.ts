/**
 * A lab of Linux network namespaces for partition faults: one namespace per node, each linked
 * by a veth to a bridge in the lab's own switch namespace (test/lab/namespaces.ts: nothing on
 * the host, so the host's firewall never sees a lab frame), with a 10.x.y.0/24 address that
 * exists only inside its namespace. `split` moves the switch ports of one group to a second
 * bridge (each group still reaches its own members, nothing crosses), `heal` moves them back.
 * `cleanup` removes everything, and a process exit hook does it too if the spec dies first.
 * Needs root (CAP_NET_ADMIN) and iproute2.
 */
import { randomBytes } from 'node:crypto'
import { addBridge, ip, Namespaces, plug } from '../lab/namespaces.js'

export interface PartitionLab {
  /** namespace names, one per node */
  readonly namespaces: string[]
  /** node i's address inside its namespace */
  address(i: number): string
  /** the command prefix that runs a process inside node i's namespace */
  prefix(i: number): string[]
  /** cuts the nodes in `group` off from the others (they still reach each other) */
  split(group: number[]): Promise<void>
  /** puts every node back on one bridge */
  heal(): Promise<void>
  /** removes the namespaces, veths and bridges (idempotent) */
  cleanup(): Promise<void>
}

/** Creates `count` namespaces on a fresh bridge; throws (after undoing what it made) if the host refuses. */
export async function createPartitionLab (count: number): Promise<PartitionLab> {
  if (count < 1 || count > 200) throw new RangeError('a lab holds 1 to 200 nodes')
  const spaces = new Namespaces()
  const bridges = ['bra', 'brb']
  const port = (i: number): string => `n${i}`
  const net = `10.${100 + randomBytes(1)[0] % 150}.${randomBytes(1)[0]}`
  const address = (i: number): string => `${net}.${i + 1}`
  const namespaces: string[] = []
  let sw = ''
  try {
    sw = await spaces.add('sw')
    for (const br of bridges) await addBridge(sw, br)
    for (let i = 0; i < count; i++) {
      const ns = await spaces.add(String(i))
      namespaces.push(ns)
      await plug({ ns, ifname: 'eth0', address: `${address(i)}/24`, switchNs: sw, bridge: bridges[0], port: port(i) })
    }
  } catch (err) {
    await spaces.cleanup()
    throw err
  }

  const attach = async (nodes: number[], bridge: string): Promise<void> => {
    for (const i of nodes) await ip('-n', sw, 'link', 'set', port(i), 'master', bridge)
  }
  return {
    namespaces,
    address,
    prefix: (i) => ['ip', 'netns', 'exec', namespaces[i]],
    split: async (group) => { await attach(group, bridges[1]) },
    heal: async () => { await attach(namespaces.map((_, i) => i), bridges[0]) },
    cleanup: async () => { await spaces.cleanup() }
  }
}
