import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { serviceDependencies, type Startable } from '@libp2p/interface'
import { resolveConfig, type NodeConfig } from '../../src/config/index.js'
import { LEDGER_CAPABILITY, LEDGER_SERVICE, ledgerServices, type LedgerService } from '../../src/ledger/index.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { ledgerBuildOptions } from '../../src/cli/commands/ledger.js'
import { setVerifierThreads } from '../../src/identity/index.js'
import { verifierThreads } from '../../src/identity/signature.js'
import { tempDir } from '../utils/index.js'

/** A service of another room that needs the ledger, as they declare it: by capability, read lazily. */
class NeedsLedger implements Startable {
  readonly [serviceDependencies]: string[] = [LEDGER_CAPABILITY]
  private readonly components: { [LEDGER_SERVICE]: LedgerService }
  reliabilityAtStart?: number

  constructor (components: { [LEDGER_SERVICE]: LedgerService }) {
    this.components = components
  }

  start (): void {
    this.reliabilityAtStart = this.components[LEDGER_SERVICE].reliability('12D3KooWNobodyKnowsThisPeer')
  }

  stop (): void {}
}

describe('ledger: typed wiring', function () {
  this.timeout(60_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  const nodes: IdlegridNode[] = []
  const config = (name: string): NodeConfig => resolveConfig({ role: 'renter', flags: { dataDir: join(dir.path, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [] } })

  before(async () => { dir = await tempDir('idlegrid-ledger-wiring-') })
  after(async () => {
    await Promise.all(nodes.map(async n => { await n.stop() }))
    await dir.cleanup()
  })

  it('a service that needs the ledger on a node without one fails at start (UnmetServiceDependenciesError)', async () => {
    await assert.rejects(
      createNode(config('without'), { services: { needsLedger: (components: any) => new NeedsLedger(components) } }),
      (err: Error) => err.name === 'UnmetServiceDependenciesError' && err.message.includes(LEDGER_CAPABILITY)
    )
  })

  it('with ledgerServices, it reaches the ledger as components[LEDGER_SERVICE] when it starts', async () => {
    const cfg = config('with')
    const ledger = ledgerServices({ config: cfg })
    const node = await createNode(cfg, {
      services: { ...ledger.services, needsLedger: (components: any) => new NeedsLedger(components) }
    })
    nodes.push(node)
    const services = node.libp2p.services as unknown as { needsLedger: NeedsLedger }
    assert.equal(services.needsLedger.reliabilityAtStart, 0.5, 'an unknown provider has the neutral prior')
  })

  it('config ledger.verifierThreads (or --ledger-verifier-threads, which wins) bounds the process\'s verifier workers; left out, the default stays; a flag outside 0-16 is refused', () => {
    const before = verifierThreads()
    try {
      ledgerServices({ config: config('default-threads') })
      assert.equal(verifierThreads(), before)
      ledgerServices({ config: { ...config('one-thread'), ledgerVerifierThreads: 1 } })
      assert.equal(verifierThreads(), 1)
      // the flag wins over the config file
      const flags = ledgerBuildOptions({ 'ledger-verifier-threads': '3' })
      assert.equal(flags.verifierThreads, 3)
      ledgerServices({ config: { ...config('flag-threads'), ledgerVerifierThreads: 1 }, ...flags })
      assert.equal(verifierThreads(), 3)
      for (const bad of ['-1', '1.5', '17', 'many']) {
        assert.throws(() => ledgerBuildOptions({ 'ledger-verifier-threads': bad }), (err: Error) => err.name === 'ConfigError' && err.message.includes('ledger-verifier-threads'))
      }
    } finally {
      setVerifierThreads()
    }
    assert.equal(verifierThreads(), before)
  })
})
