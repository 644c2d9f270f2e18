/**
 * The red team's attacker program: a separate process that starts libp2p nodes of its own with
 * the project's code, joins a local network and plays one named attack from attacks/index.ts.
 *
 *   node dist/test/redteam/attacker.js <attack> --bootstrap ADDR --data-dir DIR [--duration-ms N] [--<option> V …]
 *
 * Prints one JSON line when its nodes have joined the market topics ({"ready":true,…}), and one
 * JSON line with what the attack measured when it ends ({"attack":…,"result":{…}} or
 * {"attack":…,"error":"…"}, exit 1). Long-running attacks play until SIGTERM or --duration-ms.
 * An attack may print progress lines and wait for a "go" line on stdin from the spec.
 */
import { createInterface } from 'node:readline'
import { ATTACKS } from './attacks/index.js'
import { nodeDir, startAttackerNode, waitForMarketTopics } from './attacker-node.js'
import type { IdlegridNode } from '../../src/node/index.js'

function parseArgs (argv: string[]): { name: string, options: Record<string, string> } {
  const [name, ...rest] = argv
  if (name == null || ATTACKS[name] == null) throw new Error(`usage: attacker.js <${Object.keys(ATTACKS).join('|')}> --bootstrap ADDR --data-dir DIR [--duration-ms N]`)
  const options: Record<string, string> = {}
  for (let i = 0; i < rest.length; i += 2) {
    const key = rest[i] ?? ''
    const value = rest[i + 1]
    if (!key.startsWith('--') || value == null) throw new Error(`expected --name value pairs, got ${key}`)
    options[key.slice(2)] = value
  }
  for (const needed of ['bootstrap', 'data-dir']) if (options[needed] == null) throw new Error(`--${needed} is required`)
  return { name, options }
}

function print (value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n')
}

/** Resolves on the next "go" line on stdin, or when `signal` aborts. */
async function goLine (signal: AbortSignal): Promise<void> {
  const lines = createInterface({ input: process.stdin })
  try {
    await new Promise<void>(resolve => {
      lines.on('line', (line) => { if (line.trim() === 'go') resolve() })
      lines.once('close', () => { resolve() })
      signal.addEventListener('abort', () => { resolve() }, { once: true })
    })
  } finally {
    lines.close()
  }
}

async function main (): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs(process.argv.slice(2))
  } catch (err: any) {
    print({ attack: process.argv[2] ?? '', error: String(err?.message ?? err) })
    return 2
  }
  const { name, options } = parsed
  const attack = ATTACKS[name] as NonNullable<typeof ATTACKS[string]>
  const stop = new AbortController()
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => { stop.abort() })
  const nodes: IdlegridNode[] = []
  try {
    for (let i = 0; i < (attack.nodes ?? 1); i++) nodes.push(await startAttackerNode(nodeDir(options['data-dir'] as string, i), options.bootstrap as string))
    await Promise.all(nodes.map(async n => { await waitForMarketTopics(n) }))
    print({ ready: true, attack: name, peerIds: nodes.map(n => n.peerId.toString()) })
    const duration = options['duration-ms']
    if (duration != null) setTimeout(() => { stop.abort() }, Number(duration)).unref()
    const result = await attack.play({
      nodes,
      options,
      signal: stop.signal,
      log: (line) => { process.stderr.write(`[${name}] ${line}\n`) },
      report: (value) => { print({ progress: true, attack: name, ...value }) },
      go: async () => { await goLine(stop.signal) }
    })
    print({ attack: name, result })
    return 0
  } catch (err: any) {
    print({ attack: name, error: String(err?.message ?? err) })
    return 1
  } finally {
    await Promise.all(nodes.map(async n => { await n.stop().catch(() => {}) }))
  }
}

// pipes to the spec are written synchronously on Linux: exit at once, whatever stdin still holds open
process.exit(await main())
