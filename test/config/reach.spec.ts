/**
 * Reachability and relay settings (src/config/reach.ts, issue 37): when a node reserves relay
 * slots, what counts as a public address, and the relay section's validation.
 */
import * as assert from 'node:assert/strict'
import { resolveConfig } from '../../src/config/config.js'
import { isPublicHost, needsRelays, RELAY_DEFAULTS } from '../../src/config/reach.js'
import { ConfigError } from '../../src/config/validate.js'

const BOOT_PUBLIC = '/ip4/11.0.0.10/tcp/4001/p2p/12D3KooWLHku2egFfAE73cBuVUdrZRZUCNyWF18DD2k1ZqmrwGog'
const BOOT_LOCAL = '/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWLHku2egFfAE73cBuVUdrZRZUCNyWF18DD2k1ZqmrwGog'

function config (role: 'bootstrap' | 'provider' | 'renter', flags: Record<string, unknown>, file: Record<string, unknown> = {}): ReturnType<typeof resolveConfig> {
  return resolveConfig({ role, flags: { dataDir: '/tmp/idlegrid-reach-spec', ...flags }, file })
}

describe('config: reachability and relays', () => {
  it('tells public hosts from private, loopback, link-local, CGNAT and documentation blocks', () => {
    for (const host of ['11.0.0.10', '8.8.8.8', '2001:db9::1']) assert.equal(isPublicHost(host), true, host)
    for (const host of ['10.1.2.3', '192.168.1.10', '172.16.0.1', '172.31.255.1', '127.0.0.1', '169.254.1.1', '100.64.0.1', '100.127.1.1', '192.0.2.1', '198.51.100.7', '203.0.113.9', '0.0.0.0', '::1', 'fd00::1', 'fe80::1', '2001:db8::1', '::ffff:10.0.0.1', 'not-an-ip']) {
      assert.equal(isPublicHost(host), false, host)
    }
    assert.equal(isPublicHost('172.32.0.1'), true, 'just past 172.16/12')
  })

  it('auto: a home node joining public bootstraps reserves relay slots; a public, announcing, local or bootstrap node does not', () => {
    const home = ['192.168.1.10', '127.0.0.1']
    const at = (c: ReturnType<typeof config>, interfaces = home): boolean =>
      needsRelays({ ...c, interfaceAddresses: interfaces })
    assert.equal(at(config('provider', { listen: ['/ip4/0.0.0.0/tcp/4001'], bootstrap: [BOOT_PUBLIC] })), true, 'behind NAT')
    assert.equal(at(config('provider', { listen: ['/ip4/0.0.0.0/tcp/4001'], bootstrap: [BOOT_PUBLIC] }), ['11.0.0.20', '127.0.0.1']), false, 'a public interface')
    assert.equal(at(config('provider', { listen: ['/ip4/0.0.0.0/tcp/4001'], bootstrap: [BOOT_PUBLIC], announce: ['/ip4/11.0.0.20/tcp/4001'] })), false, 'announces an address')
    assert.equal(at(config('renter', { listen: ['/ip4/11.0.0.20/tcp/4001'], bootstrap: [BOOT_PUBLIC] })), false, 'listens on a public address')
    assert.equal(at(config('renter', { listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [BOOT_LOCAL] })), false, 'a loopback network reaches everyone')
    assert.equal(at(config('bootstrap', { listen: ['/ip4/0.0.0.0/tcp/4001'], bootstrap: [BOOT_PUBLIC] })), false, 'a bootstrap is the public end')
    assert.equal(at(config('renter', { listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [BOOT_LOCAL], reachability: 'private' })), true, 'private: always')
    assert.equal(at(config('renter', { listen: ['/ip4/0.0.0.0/tcp/0'], bootstrap: [BOOT_PUBLIC], reachability: 'public' })), false, 'public: never')
  })

  it('bootstraps relay by default with the default limits; other roles only when asked; the section is validated', () => {
    const boot = config('bootstrap', {})
    assert.deepEqual(boot.relay, { serve: true, ...RELAY_DEFAULTS })
    assert.equal(config('provider', {}).relay.serve, false)
    assert.equal(config('provider', { relayServe: 'true' }).relay.serve, true)
    assert.equal(config('bootstrap', { relayServe: 'false' }).relay.serve, false)
    const custom = config('provider', {}, { relay: { serve: true, maxReservations: 8, circuitSeconds: 30, circuitBytes: 65536, unlimited: true, maxBytesPerHour: 50 * 2 ** 30 } }).relay
    assert.deepEqual(custom, {
      serve: true,
      maxReservations: 8,
      circuitSeconds: 30,
      circuitBytes: 65536,
      unlimited: true,
      maxBytesPerHour: 50 * 2 ** 30
    })
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ relay: { maxReservations: 0 } }, 'relay.maxReservations'],
      [{ relay: { circuitBytes: 10 } }, 'relay.circuitBytes'],
      [{ relay: { circuitSeconds: 1.5 } }, 'relay.circuitSeconds'],
      [{ relay: { maxBytesPerHour: 1000 } }, 'relay.maxBytesPerHour'],
      [{ relay: { maxBytesPerHour: 'lots' } }, 'relay.maxBytesPerHour'],
      [{ relay: { unlimited: 'yes' } }, 'relay.unlimited'],
      [{ relay: { hops: 3 } }, 'relay.hops'],
      [{ relay: 'on' }, 'relay'],
      [{ reachability: 'sometimes' }, 'reachability']
    ]
    for (const [file, field] of bad) {
      assert.throws(() => config('provider', {}, file), (err: unknown) => err instanceof ConfigError && err.field === field, `${JSON.stringify(file)} names ${field}`)
    }
  })
})
