/**
 * A lab of Linux network namespaces for partition faults: one namespace per node, each with a
 * veth whose host end sits on a bridge this lab creates, and a 10.x.y.0/24 address that exists
 * only inside its namespace. `split` moves the host ends of one group to a second bridge (each
 * group still reaches its own members, nothing crosses), `heal` moves them back. Names carry a
 * random tag so runs never collide; `cleanup` removes everything, and a process exit hook does
 * it too if the spec dies first. Needs root (CAP_NET_ADMIN) and iproute2.
 */
import { execFile, execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'

const run = promisify(execFile)

async function ip (...args: string[]): Promise<void> {
  await run('ip', args, { timeout: 10_000 })
}

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
  // interface names are at most 15 bytes: "ig" + 6 hex + role letter + index
  const tag = randomBytes(3).toString('hex')
  const bridges = [`ig${tag}a`, `ig${tag}b`]
  const namespaces = Array.from({ length: count }, (_, i) => `ig-${tag}-${i}`)
  const hostEnd = (i: number): string => `ig${tag}h${i}`
  const nsEnd = (i: number): string => `ig${tag}n${i}`
  const net = `10.${100 + randomBytes(1)[0] % 150}.${randomBytes(1)[0]}`
  const address = (i: number): string => `${net}.${i + 1}`
  let cleaned = false

  const cleanupSync = (): void => {
    if (cleaned) return
    cleaned = true
    for (const ns of namespaces) { try { execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' }) } catch {} }
    for (const br of bridges) { try { execFileSync('ip', ['link', 'del', br], { stdio: 'ignore' }) } catch {} }
  }
  process.once('exit', cleanupSync)

  const cleanup = async (): Promise<void> => {
    if (cleaned) return
    cleaned = true
    process.off('exit', cleanupSync)
    // deleting a namespace deletes its veth end, and with it the pair
    for (const ns of namespaces) await ip('netns', 'del', ns).catch(() => {})
    for (const br of bridges) await ip('link', 'del', br).catch(() => {})
  }

  try {
    for (const br of bridges) {
      await ip('link', 'add', br, 'type', 'bridge')
      await ip('link', 'set', br, 'up')
    }
    for (const [i, ns] of namespaces.entries()) {
      await ip('netns', 'add', ns)
      await ip('link', 'add', hostEnd(i), 'type', 'veth', 'peer', 'name', nsEnd(i))
      await ip('link', 'set', nsEnd(i), 'netns', ns)
      await ip('link', 'set', hostEnd(i), 'master', bridges[0])
      await ip('link', 'set', hostEnd(i), 'up')
      await ip('-n', ns, 'addr', 'add', `${address(i)}/24`, 'dev', nsEnd(i))
      await ip('-n', ns, 'link', 'set', nsEnd(i), 'up')
      await ip('-n', ns, 'link', 'set', 'lo', 'up')
    }
  } catch (err) {
    await cleanup()
    throw err
  }

  const attach = async (nodes: number[], bridge: string): Promise<void> => {
    for (const i of nodes) await ip('link', 'set', hostEnd(i), 'master', bridge)
  }
  return {
    namespaces,
    address,
    prefix: (i) => ['ip', 'netns', 'exec', namespaces[i]],
    split: async (group) => { await attach(group, bridges[1]) },
    heal: async () => { await attach(namespaces.map((_, i) => i), bridges[0]) },
    cleanup
  }
}
