/**
 * The inputs of services (issue 17): serve frames as the gateway and the provider's host read
 * them (decodeBounded with the serve limits, then the one-member rule), usage frames as both
 * sides of the usage exchange read them, co-signed usage statements as the ledger opens them
 * (every rule and both signatures), and service files as `idlegrid deploy` reads them. Seeds
 * are made by the code itself (frames of each kind, a statement signed by two real keys) and
 * the example service files.
 */
import { readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { decodeBounded, WireDecodeError } from '../../../protocols/codec.js'
import { ServeFrame } from '../../../protocols/serve.js'
import { UsageFrame } from '../../../protocols/usage.js'
import { encodeCoSigned, encodeStatement, openCoSignedUsage, signStatement } from '../../../src/ledger/usage/statement.js'
import { ConfigError } from '../../../src/config/index.js'
import { LedgerError } from '../../../src/ledger/errors.js'
import { ServeError } from '../../../src/serve/errors.js'
import { MAX_SERVE_FRAME_BYTES, SERVE_LIMITS, serveFrameKind } from '../../../src/serve/wire.js'
import { decodeFrame } from '../../../src/serve/usage/frames.js'
import { loadServiceFile } from '../../../src/serve/service-file.js'
import { tempDir } from '../../utils/wait.js'
import { bytesInput, textInput } from '../mutate.js'
import { repoRoot } from '../vectors.js'
import { BoundError, checkDecoded, type FuzzTarget, type TargetFactory } from '../target.js'

const LEASE = new Uint8Array(16).fill(7)

function serveSeeds (): Uint8Array[] {
  const frames: ServeFrame[] = [
    { request: { leaseId: LEASE, method: 'POST', path: '/v1/sentiment?x=1', headers: [{ name: 'content-type', value: 'application/json' }, { name: 'accept', value: 'text/event-stream' }] } },
    { response: { status: 200, headers: [{ name: 'content-type', value: 'text/event-stream' }], draining: false } },
    { response: { status: 503, headers: [], draining: true } },
    { body: { data: new TextEncoder().encode('{"text":"a good day"}') } },
    { end: {} },
    { error: { code: ServeFrame.Error.Code.DRAINING, message: 'replica stopping' } }
  ]
  return frames.map(f => ServeFrame.encode(f))
}

/** A statement both parties signed, its pieces, and the usage frames that carry it. */
async function usageSeeds (): Promise<{ coSigned: Uint8Array[], frames: Uint8Array[] }> {
  const providerKey = await generateKeyPair('Ed25519')
  const renterKey = await generateKeyPair('Ed25519')
  const statement = encodeStatement({
    leaseId: LEASE,
    provider: peerIdFromPrivateKey(providerKey).toMultihash().bytes,
    renter: peerIdFromPrivateKey(renterKey).toMultihash().bytes,
    intervalStart: 1_767_225_600_000,
    intervalEnd: 1_767_225_660_000,
    requests: 120,
    gpuMs: 58_000,
    bytesIn: 20_480,
    bytesOut: 61_440,
    priceMicroUsdPerGpuHour: 2_100_000
  })
  const providerSignature = signStatement(providerKey, statement)
  const renterSignature = signStatement(renterKey, statement)
  const frames: UsageFrame[] = [
    { proposal: { statement } },
    { countersigned: { statement, renterSignature } },
    { recorded: {} },
    { refused: { code: UsageFrame.Refused.Code.BAD_STATEMENT, message: 'claims more than was measured' } }
  ]
  return {
    coSigned: [encodeCoSigned(statement, providerSignature, renterSignature)],
    frames: frames.map(f => UsageFrame.encode(f))
  }
}

const serveFrame: TargetFactory = {
  name: 'serve/frame',
  build: async () => ({
    name: 'serve/frame',
    what: `decodeBounded(ServeFrame, ≤ ${MAX_SERVE_FRAME_BYTES} B, serve limits) + serveFrameKind (one member)`,
    typed: [WireDecodeError, ServeError],
    arbitrary: bytesInput(serveSeeds(), { maxBytes: MAX_SERVE_FRAME_BYTES + 64 }),
    async: false,
    weight: 1,
    run: (input) => {
      const frame = decodeBounded(ServeFrame, input, 'serve frame', MAX_SERVE_FRAME_BYTES, SERVE_LIMITS)
      checkDecoded(frame, SERVE_LIMITS, input.byteLength)
      serveFrameKind(frame)
    }
  } satisfies FuzzTarget)
}

const usageFrame: TargetFactory = {
  name: 'serve/usage-frame',
  build: async () => ({
    name: 'serve/usage-frame',
    what: 'decodeFrame of the usage exchange (bounded decode, one member)',
    typed: [ServeError],
    arbitrary: bytesInput((await usageSeeds()).frames, { maxBytes: 2048 }),
    async: false,
    weight: 1,
    run: (input) => { checkDecoded(decodeFrame(input), undefined, input.byteLength) }
  } satisfies FuzzTarget)
}

const usageStatement: TargetFactory = {
  name: 'ledger/usage-statement',
  build: async () => ({
    name: 'ledger/usage-statement',
    what: 'openCoSignedUsage: bounded decode, statement rules, amount, both signatures',
    typed: [{ cls: LedgerError, codes: ['ERR_LEDGER_USAGE'] }],
    arbitrary: bytesInput((await usageSeeds()).coSigned, { maxBytes: 1024 }),
    async: true,
    weight: 0.5,
    run: async (input) => {
      const opened = await openCoSignedUsage(input)
      const u = opened.usage
      if (u.intervalEnd <= u.intervalStart || u.amountMicroUsd > Number.MAX_SAFE_INTEGER) throw new BoundError('an accepted statement out of its rules')
    }
  } satisfies FuzzTarget)
}

const serviceFile: TargetFactory = {
  name: 'file/service',
  build: async () => {
    const dir = await tempDir('idlegrid-fuzz-service-')
    const path = join(dir.path, 'service.yaml')
    const root = join(repoRoot(), 'examples', 'services')
    const seeds = readdirSync(root).filter(f => f.endsWith('.yaml')).map(f => readFileSync(join(root, f), 'utf8'))
    // the files a service ships are read from beside the service file: the seeds' are there
    for (const entry of readdirSync(root).filter(f => !f.endsWith('.yaml'))) symlinkSync(join(root, entry), join(dir.path, entry))
    return {
      name: 'file/service',
      what: 'loadServiceFile on edited YAML service files',
      typed: [ConfigError],
      arbitrary: textInput(seeds, 16 * 1024),
      async: true,
      weight: 1,
      run: async (input) => {
        writeFileSync(path, input)
        const spec = await loadServiceFile(path)
        if (spec.replicas.length > 32 || spec.runtime.command.length > 256) throw new BoundError('a service spec list past its bound')
      },
      close: dir.cleanup
    } satisfies FuzzTarget
  }
}

export const serviceTargets: TargetFactory[] = [serveFrame, usageFrame, usageStatement, serviceFile]
