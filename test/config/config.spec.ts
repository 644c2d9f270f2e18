import * as assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { homedir, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { isCoded } from '../../src/common/index.js'
import { DEFAULT_LISTEN, defaultDataDir, readConfigFile, resolveConfig, ROLES, type ConfigSources } from '../../src/config/config.js'
import { ConfigError, asBoolean, asEnum, asEnumList, asNumber, asObject, asString, asStringList, onlyKnownKeys } from '../../src/config/validate.js'

function expectConfigError (fn: () => unknown, field: string, expected?: RegExp): ConfigError {
  let caught: unknown
  try {
    fn()
  } catch (err) {
    caught = err
  }
  if (!(caught instanceof ConfigError)) assert.fail(`expected a ConfigError for "${field}", got ${String(caught)}`)
  assert.equal(caught.name, 'ConfigError')
  assert.equal(caught.code, 'ERR_CONFIG')
  assert.equal(caught.field, field, `field named (message: ${caught.message})`)
  assert.ok(caught.message.includes(`"${field}"`), `message names the field: ${caught.message}`)
  assert.match(caught.message, /expected /)
  if (expected != null) assert.match(caught.message, expected)
  return caught
}

async function expectConfigFileError (fn: () => Promise<unknown>, pattern: RegExp): Promise<ConfigError> {
  let caught: unknown
  try {
    await fn()
  } catch (err) {
    caught = err
  }
  if (!isCoded(caught, ConfigError, 'ERR_CONFIG_FILE')) assert.fail(`expected a ConfigError ERR_CONFIG_FILE, got ${String(caught)}`)
  assert.equal(caught.name, 'ConfigError')
  assert.equal(caught.field, undefined)
  assert.equal(caught.code, 'ERR_CONFIG_FILE')
  assert.match(caught.message, pattern)
  return caught
}

describe('config', () => {
  let peerA: string
  let peerB: string
  let peerC: string
  let localBoot: string
  let publicBoot: string

  before(async () => {
    peerA = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString()
    peerB = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString()
    peerC = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString()
    localBoot = `/ip4/127.0.0.1/tcp/4001/p2p/${peerA}`
    publicBoot = `/ip4/1.2.3.4/tcp/4001/p2p/${peerB}`
  })

  /** resolveConfig with an empty environment unless given */
  const resolveWith = (sources: Partial<ConfigSources> & { role?: ConfigSources['role'] }): ReturnType<typeof resolveConfig> =>
    resolveConfig({ role: 'provider', env: {}, ...sources })

  describe('resolveConfig defaults', () => {
    it('each role gets its default listen addresses and the common defaults', () => {
      for (const role of ROLES) {
        const config = resolveWith({ role })
        assert.equal(config.role, role)
        assert.deepEqual(config.listen, DEFAULT_LISTEN[role])
        assert.equal(config.dataDir, resolve(homedir(), '.idlegrid'))
        assert.equal(config.dataDir, defaultDataDir())
        assert.deepEqual(config.announce, [])
        assert.deepEqual(config.bootstrap, [])
        assert.equal(config.maxConnections, 200)
        assert.equal(config.targetPeers, 24)
        assert.equal(config.heartbeatMs, 10_000)
        assert.deepEqual(config.provider, {})
        // default listen addresses are loopback, so private addresses are kept
        assert.equal(config.privateAddresses, true)
      }
      assert.deepEqual(resolveWith({ role: 'bootstrap' }).listen, ['/ip4/127.0.0.1/tcp/4001', '/ip4/127.0.0.1/tcp/4002/ws'])
      assert.deepEqual(resolveWith({ role: 'renter' }).listen, ['/ip4/127.0.0.1/tcp/0'])
    })

    it('dataDir comes from IDLEGRID_DATA_DIR, and is made absolute', () => {
      assert.equal(resolveWith({ env: { IDLEGRID_DATA_DIR: '/srv/idlegrid' } }).dataDir, '/srv/idlegrid')
      assert.equal(resolveWith({ env: { IDLEGRID_DATA_DIR: 'rel/dir' } }).dataDir, resolve(process.cwd(), 'rel/dir'))
      // an empty variable counts as unset
      assert.equal(resolveWith({ env: { IDLEGRID_DATA_DIR: '' } }).dataDir, defaultDataDir())
    })

    it('expands ~ in dataDir (only a leading ~ or ~/)', () => {
      assert.equal(resolveWith({ flags: { dataDir: '~/grid' } }).dataDir, join(homedir(), 'grid'))
      assert.equal(resolveWith({ flags: { dataDir: '~' } }).dataDir, homedir())
      assert.equal(resolveWith({ env: { IDLEGRID_DATA_DIR: '~/from-env' } }).dataDir, join(homedir(), 'from-env'))
      assert.equal(resolveWith({ file: { dataDir: '~/from-file' } }).dataDir, join(homedir(), 'from-file'))
      assert.equal(resolveWith({ flags: { dataDir: '/x/~/y' } }).dataDir, '/x/~/y')
    })

    it('uses the default bootstrap list only when nothing else names one', () => {
      assert.deepEqual(resolveWith({ defaultBootstrap: [localBoot] }).bootstrap, [localBoot])
      assert.deepEqual(resolveWith({ defaultBootstrap: [localBoot], file: { bootstrap: [publicBoot] } }).bootstrap, [
        publicBoot
      ])
    })

    it('converts heartbeatSeconds to milliseconds and accepts numeric strings from flags', () => {
      assert.equal(resolveWith({ file: { heartbeatSeconds: 2.5 } }).heartbeatMs, 2500)
      const config = resolveWith({ flags: { heartbeatSeconds: '0.5', maxConnections: '50', targetPeers: '7' } })
      assert.equal(config.heartbeatMs, 500)
      assert.equal(config.maxConnections, 50)
      assert.equal(config.targetPeers, 7)
    })

    it('heartbeatGossip (the legacy heartbeat topic) is off unless the file or --heartbeat-gossip turns it on', () => {
      assert.equal(resolveWith({}).heartbeatGossip, false)
      assert.equal(resolveWith({ file: { heartbeatGossip: true } }).heartbeatGossip, true)
      assert.equal(resolveWith({ flags: { heartbeatGossip: true } }).heartbeatGossip, true)
    })

    it('ledger.retain is horizon (the default, left undefined) or all; anything else is refused by its field', () => {
      assert.equal(resolveWith({}).ledgerRetain, undefined)
      assert.equal(resolveWith({ file: { ledger: { retain: 'all' } } }).ledgerRetain, 'all')
      assert.equal(resolveWith({ file: { ledger: { retain: 'horizon', replicate: 'bounded' } } }).ledgerRetain, 'horizon')
      expectConfigError(() => resolveWith({ file: { ledger: { retain: 'forever' } } }), 'ledger.retain')
    })

    it('ledger.horizon is a whole number of hops from 0 to 4; undefined leaves the default (2)', () => {
      assert.equal(resolveWith({}).ledgerHorizon, undefined)
      assert.equal(resolveWith({ file: { ledger: { horizon: 1 } } }).ledgerHorizon, 1)
      expectConfigError(() => resolveWith({ file: { ledger: { horizon: 1.5 } } }), 'ledger.horizon')
      expectConfigError(() => resolveWith({ file: { ledger: { horizon: 9 } } }), 'ledger.horizon')
    })

    it('ledger.verifierThreads is a whole number from 0 to 16; undefined leaves the default (a worker per core, up to 4)', () => {
      assert.equal(resolveWith({}).ledgerVerifierThreads, undefined)
      assert.equal(resolveWith({ file: { ledger: { verifierThreads: 0 } } }).ledgerVerifierThreads, 0)
      assert.equal(resolveWith({ file: { ledger: { verifierThreads: 2 } } }).ledgerVerifierThreads, 2)
      expectConfigError(() => resolveWith({ file: { ledger: { verifierThreads: 1.5 } } }), 'ledger.verifierThreads')
      expectConfigError(() => resolveWith({ file: { ledger: { verifierThreads: -1 } } }), 'ledger.verifierThreads')
      expectConfigError(() => resolveWith({ file: { ledger: { verifierThreads: 17 } } }), 'ledger.verifierThreads')
    })
  })

  describe('precedence: flags > env > file > defaults', () => {
    it('dataDir', () => {
      const file = { dataDir: '/from/file' }
      const env = { IDLEGRID_DATA_DIR: '/from/env' }
      const flags = { dataDir: '/from/flag' }
      assert.equal(resolveWith({ file }).dataDir, '/from/file')
      assert.equal(resolveWith({ file, env }).dataDir, '/from/env')
      assert.equal(resolveWith({ file, env, flags }).dataDir, '/from/flag')
      assert.equal(resolveWith({ env, flags }).dataDir, '/from/flag')
    })

    it('bootstrap (IDLEGRID_BOOTSTRAP is a comma-separated list)', () => {
      const third = `/ip4/127.0.0.1/tcp/4003/p2p/${peerC}`
      const file = { bootstrap: [publicBoot] }
      const env = { IDLEGRID_BOOTSTRAP: `${localBoot}, ${third}` }
      const flags = { bootstrap: [third] }
      assert.deepEqual(resolveWith({ file }).bootstrap, [publicBoot])
      assert.deepEqual(resolveWith({ file, env }).bootstrap, [localBoot, third])
      assert.deepEqual(resolveWith({ file, env, flags }).bootstrap, [third])
      assert.deepEqual(resolveWith({ file, env: { IDLEGRID_BOOTSTRAP: '' } }).bootstrap, [publicBoot], 'empty env var is unset')
    })

    it('fields without an environment variable: flags > file', () => {
      const file = { listen: ['/ip4/127.0.0.1/tcp/5000'], maxConnections: 300, heartbeatSeconds: 30 }
      assert.deepEqual(resolveWith({ file }).listen, ['/ip4/127.0.0.1/tcp/5000'])
      assert.equal(resolveWith({ file }).maxConnections, 300)
      const config = resolveWith({ file, flags: { listen: ['/ip4/127.0.0.1/tcp/6000'], maxConnections: 40 } })
      assert.deepEqual(config.listen, ['/ip4/127.0.0.1/tcp/6000'])
      assert.equal(config.maxConnections, 40)
      assert.equal(config.heartbeatMs, 30_000, 'a field the flags leave out still comes from the file')
      // an undefined flag does not shadow the file
      assert.equal(resolveWith({ file, flags: { maxConnections: undefined } }).maxConnections, 300)
    })

    it('a file\'s role that matches the command is accepted in any case', () => {
      assert.equal(resolveWith({ role: 'provider', file: { role: 'Provider' } }).role, 'provider')
    })
  })

  describe('readConfigFile', () => {
    let dir: string

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'idlegrid-config-'))
    })

    after(async () => {
      await rm(dir, { recursive: true, force: true })
    })

    it('parses a YAML file', async () => {
      const path = join(dir, 'ok.yaml')
      await writeFile(path, 'role: provider\nlisten:\n  - /ip4/127.0.0.1/tcp/4010\nmaxConnections: 50\nprovider:\n  gpus: all\n')
      const file = await readConfigFile(path)
      assert.deepEqual(file, { role: 'provider', listen: ['/ip4/127.0.0.1/tcp/4010'], maxConnections: 50, provider: { gpus: 'all' } })
      const config = resolveWith({ file })
      assert.deepEqual(config.listen, ['/ip4/127.0.0.1/tcp/4010'])
      assert.equal(config.maxConnections, 50)
      assert.deepEqual(config.provider, { gpus: 'all' })
    })

    it('a missing file is an ERR_CONFIG_FILE', async () => {
      const path = join(dir, 'nope.yaml')
      const err = await expectConfigFileError(async () => await readConfigFile(path), /does not exist/)
      assert.ok(err.message.includes(path))
    })

    it('an unreadable path (a directory) is an ERR_CONFIG_FILE', async () => {
      const path = join(dir, 'a-dir.yaml')
      await mkdir(path)
      await expectConfigFileError(async () => await readConfigFile(path), /cannot be read/)
    })

    it('invalid YAML is an ERR_CONFIG_FILE that names the line', async () => {
      const path = join(dir, 'bad.yaml')
      const cases: Array<[string, number]> = [
        ['role: provider\nlisten:\n  - /ip4/127.0.0.1/tcp/1\n bad: 1\n', 4],
        ['role: provider\nrole: renter\n', 2],
        ['a: 1\n\tb: 2\n', 2],
        ['role: provider\nlisten:\n- a\nfoo: bar: baz\n', 4]
      ]
      for (const [yaml, line] of cases) {
        await writeFile(path, yaml)
        const err = await expectConfigFileError(async () => await readConfigFile(path), /not valid YAML/)
        assert.match(err.message, new RegExp(`\\(line ${line}\\)`), JSON.stringify(yaml))
        assert.ok(err.message.includes(path))
        assert.ok(!err.message.includes('\n'), 'one line')
      }
    })

    it('an empty (or comment-only) file is an empty config', async () => {
      const path = join(dir, 'empty.yaml')
      await writeFile(path, '')
      assert.deepEqual(await readConfigFile(path), {})
      await writeFile(path, '# nothing here\n')
      assert.deepEqual(await readConfigFile(path), {})
    })

    it('a top level that is not a mapping is a ConfigError', async () => {
      const path = join(dir, 'list.yaml')
      await writeFile(path, '- a\n- b\n')
      let caught: unknown
      try { await readConfigFile(path) } catch (err) { caught = err }
      assert.ok(caught instanceof ConfigError)
      assert.equal(caught.field, '(top level)')
      assert.match(caught.message, /a mapping/)
    })
  })

  describe('bad fields → ConfigError naming the field', () => {
    it('an unknown top-level key', () => {
      const err = expectConfigError(() => resolveWith({ file: { listen: ['/ip4/127.0.0.1/tcp/1'], maxConections: 5 } }), 'maxConections', /known fields/)
      assert.match(err.message, /maxConnections/, 'lists the known fields')
    })

    it('an unparsable multiaddr in listen', () => {
      expectConfigError(() => resolveWith({ file: { listen: ['/ip4/999.1.1.1/tcp/1'] } }), 'listen[0]', /multiaddr/)
      expectConfigError(() => resolveWith({ file: { listen: ['/ip4/127.0.0.1/tcp/1', 'localhost:4001'] } }), 'listen[1]', /multiaddr/)
      expectConfigError(() => resolveWith({ flags: { listen: ['/ip4/1.2.3.4/tcp/99999'] } }), 'listen[0]', /multiaddr/)
      // a single string (a flag) names the field itself
      expectConfigError(() => resolveWith({ flags: { listen: 'nonsense' } }), 'listen', /multiaddr/)
      expectConfigError(() => resolveWith({ file: { listen: [] } }), 'listen', /at least one/)
      expectConfigError(() => resolveWith({ file: { listen: [42] } }), 'listen[0]', /string/)
      expectConfigError(() => resolveWith({ file: { listen: { a: 1 } } }), 'listen', /list of strings/)
      expectConfigError(() => resolveWith({ file: { announce: ['/ip4/1.2.3/tcp/1'] } }), 'announce[0]', /multiaddr/)
    })

    it('a bootstrap address without /p2p/<peer id>', () => {
      const err = expectConfigError(() => resolveWith({ file: { bootstrap: ['/ip4/127.0.0.1/tcp/4001'] } }), 'bootstrap[0]', /\/p2p\//)
      assert.match(err.message, /\/ip4\/127\.0\.0\.1\/tcp\/4001/, 'shows the value')
      expectConfigError(() => resolveWith({ file: { bootstrap: [localBoot, '/ip4/1.2.3.4/tcp/4001'] } }), 'bootstrap[1]', /\/p2p\//)
      expectConfigError(() => resolveWith({ env: { IDLEGRID_BOOTSTRAP: '/ip4/1.2.3.4/tcp/1' } }), 'bootstrap[0]', /\/p2p\//)
      expectConfigError(() => resolveWith({ file: { bootstrap: ['/ip4/1.2.3.4/tcp/x/p2p/abc'] } }), 'bootstrap[0]', /multiaddr/)
    })

    it('maxConnections not an integer, or too small', () => {
      expectConfigError(() => resolveWith({ file: { maxConnections: 2.5 } }), 'maxConnections', /whole number/)
      expectConfigError(() => resolveWith({ file: { maxConnections: 'lots' } }), 'maxConnections', /a number/)
      expectConfigError(() => resolveWith({ file: { maxConnections: 1 } }), 'maxConnections', />= 2/)
      expectConfigError(() => resolveWith({ file: { maxConnections: 0 } }), 'maxConnections', />= 2/)
      expectConfigError(() => resolveWith({ file: { maxConnections: 10_001 } }), 'maxConnections', /<= 10000/)
      assert.equal(resolveWith({ file: { maxConnections: 2, targetPeers: 2 } }).maxConnections, 2)
    })

    it('targetPeers above maxConnections', () => {
      expectConfigError(() => resolveWith({ file: { maxConnections: 10, targetPeers: 11 } }), 'targetPeers', /<= 10/)
      assert.equal(resolveWith({ file: { maxConnections: 10, targetPeers: 10 } }).targetPeers, 10)
      expectConfigError(() => resolveWith({ file: { targetPeers: -1 } }), 'targetPeers', />= 0/)
    })

    it('a small maxConnections alone is valid: the default targetPeers follows it down', () => {
      // the user never set targetPeers, so it must not be the field an error names
      const config = resolveWith({ file: { maxConnections: 10 } })
      assert.equal(config.maxConnections, 10)
      assert.equal(config.targetPeers, 10)
      assert.equal(resolveWith({ flags: { maxConnections: '2' } }).targetPeers, 2)
      assert.equal(resolveWith({ file: { maxConnections: 100 } }).targetPeers, 24)
    })

    it('heartbeatSeconds negative, zero or absurd', () => {
      expectConfigError(() => resolveWith({ file: { heartbeatSeconds: -1 } }), 'heartbeatSeconds', />= 0.1/)
      expectConfigError(() => resolveWith({ file: { heartbeatSeconds: 0 } }), 'heartbeatSeconds', />= 0.1/)
      expectConfigError(() => resolveWith({ flags: { heartbeatSeconds: '-5' } }), 'heartbeatSeconds', />= 0.1/)
      expectConfigError(() => resolveWith({ file: { heartbeatSeconds: 'soon' } }), 'heartbeatSeconds', /a number/)
      expectConfigError(() => resolveWith({ file: { heartbeatSeconds: 3601 } }), 'heartbeatSeconds', /<= 3600/)
    })

    it('heartbeatGossip not a boolean', () => {
      expectConfigError(() => resolveWith({ file: { heartbeatGossip: 'sometimes' } }), 'heartbeatGossip', /true or false/)
    })

    it('a role in the file that differs from the command', () => {
      const err = expectConfigError(() => resolveWith({ role: 'provider', file: { role: 'renter' } }), 'role', /"provider"/)
      assert.match(err.message, /renter/, 'shows what the file said')
      expectConfigError(() => resolveWith({ role: 'renter', file: { role: 'miner' } }), 'role', /one of bootstrap, provider, renter/)
    })

    it('a bad dataDir, privateAddresses or provider section', () => {
      expectConfigError(() => resolveWith({ file: { dataDir: 42 } }), 'dataDir', /string/)
      expectConfigError(() => resolveWith({ file: { dataDir: '' } }), 'dataDir', /non-empty string/)
      expectConfigError(() => resolveWith({ file: { privateAddresses: 'yes' } }), 'privateAddresses', /true or false/)
      expectConfigError(() => resolveWith({ file: { provider: ['gpu'] } }), 'provider', /mapping/)
    })
  })

  describe('privateAddresses', () => {
    it('auto: true for loopback bootstrap addresses, false for a public one', () => {
      assert.equal(resolveWith({ file: { bootstrap: [localBoot] } }).privateAddresses, true)
      assert.equal(resolveWith({ file: { bootstrap: [publicBoot] } }).privateAddresses, false)
      assert.equal(resolveWith({ file: { bootstrap: [publicBoot], privateAddresses: 'auto' } }).privateAddresses, false)
      assert.equal(resolveWith({ file: { bootstrap: [`/ip4/192.168.1.20/tcp/4001/p2p/${peerA}`] } }).privateAddresses, true)
      assert.equal(resolveWith({ file: { bootstrap: [`/ip4/10.0.0.5/tcp/4001/p2p/${peerA}`] } }).privateAddresses, true)
      assert.equal(resolveWith({ file: { bootstrap: [`/ip4/172.32.0.1/tcp/4001/p2p/${peerA}`] } }).privateAddresses, false, '172.32/12 is public')
      assert.equal(resolveWith({ file: { bootstrap: [`/dns4/boot.example.com/tcp/4001/p2p/${peerA}`] } }).privateAddresses, false)
      assert.equal(resolveWith({ file: { bootstrap: [`/ip6/::1/tcp/4001/p2p/${peerA}`] } }).privateAddresses, true)
      assert.equal(resolveWith({ file: { bootstrap: [`/ip6/fd12:3456::1/tcp/4001/p2p/${peerA}`] } }).privateAddresses, true)
      assert.equal(resolveWith({ file: { bootstrap: [`/ip6/fe80::1/tcp/4001/p2p/${peerA}`] } }).privateAddresses, true)
      assert.equal(resolveWith({ file: { bootstrap: [`/ip6/2001:db8::1/tcp/4001/p2p/${peerA}`] } }).privateAddresses, false)
      // public host names that merely start like a private IPv6 prefix are public
      assert.equal(resolveWith({ file: { bootstrap: [`/dns4/fdroid.example.org/tcp/4001/p2p/${peerA}`] } }).privateAddresses, false)
      assert.equal(resolveWith({ file: { bootstrap: [`/dns4/fcc.example.org/tcp/4001/p2p/${peerA}`] } }).privateAddresses, false)
      assert.equal(resolveWith({ file: { bootstrap: [`/dns6/fe80.example.net/tcp/4001/p2p/${peerA}`] } }).privateAddresses, false)
      // one local bootstrap among public ones keeps private addresses
      assert.equal(resolveWith({ file: { bootstrap: [publicBoot, localBoot] } }).privateAddresses, true)
      // with no bootstrap, the listen addresses decide
      assert.equal(resolveWith({ file: { listen: ['/ip4/0.0.0.0/tcp/4001'] } }).privateAddresses, true)
      assert.equal(resolveWith({ file: { listen: ['/ip4/1.2.3.4/tcp/4001'] } }).privateAddresses, false)
    })

    it('explicit values win over auto', () => {
      assert.equal(resolveWith({ file: { bootstrap: [publicBoot], privateAddresses: true } }).privateAddresses, true)
      assert.equal(resolveWith({ file: { bootstrap: [localBoot], privateAddresses: false } }).privateAddresses, false)
      assert.equal(resolveWith({ file: { bootstrap: [localBoot] }, flags: { privateAddresses: 'false' } }).privateAddresses, false)
      assert.equal(resolveWith({ file: { bootstrap: [publicBoot], privateAddresses: false }, flags: { privateAddresses: 'true' } }).privateAddresses, true)
    })

    it('an address with no host (e.g. a bare /p2p/<peer id>) is a ConfigError, not a crash', () => {
      for (const bootstrap of [`/p2p/${peerA}`, `/p2p-circuit/p2p/${peerA}`]) {
        let caught: unknown
        try {
          resolveWith({ file: { bootstrap: [bootstrap] } })
        } catch (err) {
          caught = err
        }
        if (caught !== undefined) {
          assert.ok(caught instanceof ConfigError, `only a ConfigError may come out of resolveConfig, got ${String(caught)}`)
          assert.equal(caught.field, 'bootstrap[0]')
        }
      }
    })
  })

  describe('validate.ts', () => {
    it('asEnum returns the canonical spelling, case- and space-insensitively', () => {
      assert.equal(asEnum('PROVIDER', 'role', ROLES), 'provider')
      assert.equal(asEnum('  Renter ', 'role', ROLES), 'renter')
      // the allowed list's spelling, not the input's
      assert.equal(asEnum('mIXED', 'f', ['Mixed', 'lower'] as const), 'Mixed')
    })

    it('asEnum rejects other values and non-strings', () => {
      expectConfigError(() => asEnum('miner', 'role', ROLES), 'role', /one of bootstrap, provider, renter, got "miner"/)
      expectConfigError(() => asEnum(1, 'role', ROLES), 'role', /got 1$/)
      expectConfigError(() => asEnum(undefined, 'role', ROLES), 'role', /one of/)
      assert.deepEqual(asEnumList('Provider, RENTER', 'roles', ROLES), ['provider', 'renter'])
      expectConfigError(() => asEnumList(['provider', 'x'], 'roles', ROLES), 'roles[1]')
    })

    it('asStringList accepts a list, a string, or a comma-separated string', () => {
      assert.deepEqual(asStringList('a, b,,c ', 'f'), ['a', 'b', 'c'])
      assert.deepEqual(asStringList('one', 'f'), ['one'])
      assert.deepEqual(asStringList('', 'f'), [])
      assert.deepEqual(asStringList(['x', 'y'], 'f'), ['x', 'y'])
      expectConfigError(() => asStringList(['x', ''], 'f'), 'f[1]', /non-empty string/)
      expectConfigError(() => asStringList(['x', 3], 'f'), 'f[1]', /a string/)
      expectConfigError(() => asStringList(7, 'f'), 'f', /a list of strings, got 7/)
    })

    it('asNumber takes numbers and numeric strings, with bounds', () => {
      assert.equal(asNumber('42', 'n'), 42)
      assert.equal(asNumber(' 2.5 ', 'n'), 2.5)
      assert.equal(asNumber(7, 'n', { integer: true, min: 7, max: 7 }), 7)
      expectConfigError(() => asNumber('', 'n'), 'n', /a number/)
      expectConfigError(() => asNumber('   ', 'n'), 'n', /a number/)
      expectConfigError(() => asNumber('4x', 'n'), 'n', /a number, got "4x"/)
      expectConfigError(() => asNumber(Number.NaN, 'n'), 'n', /a number/)
      expectConfigError(() => asNumber(Infinity, 'n'), 'n', /a number/)
      expectConfigError(() => asNumber(true, 'n'), 'n', /a number/)
      expectConfigError(() => asNumber(null, 'n'), 'n', /got null/)
      expectConfigError(() => asNumber('1.5', 'n', { integer: true }), 'n', /whole number/)
      expectConfigError(() => asNumber(3, 'n', { min: 4 }), 'n', />= 4/)
      expectConfigError(() => asNumber(5, 'n', { max: 4 }), 'n', /<= 4/)
    })

    it('asBoolean, asString, asObject and onlyKnownKeys', () => {
      assert.equal(asBoolean(true, 'b'), true)
      assert.equal(asBoolean('false', 'b'), false)
      expectConfigError(() => asBoolean(1, 'b'), 'b', /true or false/)
      assert.equal(asString('v', 's', { nonEmpty: true }), 'v')
      expectConfigError(() => asString(' ', 's', { nonEmpty: true }), 's', /non-empty/)
      expectConfigError(() => asString('abc', 's', { pattern: /^\d+$/, patternText: 'digits' }), 's', /expected digits/)
      assert.deepEqual(asObject({ a: 1 }, 'o'), { a: 1 })
      expectConfigError(() => asObject([], 'o'), 'o', /mapping.*got a list/)
      expectConfigError(() => asObject(null, 'o'), 'o', /got null/)
      onlyKnownKeys({ a: 1 }, ['a', 'b'], 'provider')
      expectConfigError(() => onlyKnownKeys({ a: 1, c: 2 }, ['a', 'b'], 'provider'), 'provider.c', /one of the known fields \(a, b\)/)
      // long values are shortened in messages
      const err = expectConfigError(() => asNumber('x'.repeat(200), 'n'), 'n')
      assert.ok(err.message.length < 150, err.message)
    })
  })
})
