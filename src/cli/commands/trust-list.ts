import { readFile, writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { peerIdFromPrivateKey, peerIdFromString } from '@libp2p/peer-id'
import { asNumber, defaultDataDir } from '../../config/index.js'
import { DOMAIN } from '../../../protocols/ids.js'
import { loadOrCreateKey, openEnvelopeUnverified } from '../../identity/index.js'
import { MAX_TRUST_LIST_BYTES, openTrustList, sealTrustList, trustListRejected } from '../../ledger/index.js'
import { EXIT, UsageError } from '../errors.js'
import { COMMON_OPTIONS } from '../options.js'
import type { CommandDefinition } from '../command.js'

const SUBCOMMANDS = ['sign', 'show'] as const
const DAY_MS = 86_400_000

export const trustListCommand: CommandDefinition = {
  name: 'trust-list',
  usage: 'idlegrid trust-list sign --peer PEER_ID… --sequence N --out FILE [options] | idlegrid trust-list show FILE [--trust-operator KEY]',
  allowPositionals: true,
  options: {
    'data-dir': { type: 'string', valueName: 'DIR', description: 'sign: the data directory whose node key is the operator key (default ~/.idlegrid, env IDLEGRID_DATA_DIR)' },
    peer: { type: 'string', multiple: true, valueName: 'PEER_ID', description: 'sign: a peer the list vouches for (repeatable, at most 256)' },
    name: { type: 'string', valueName: 'TEXT', description: 'sign: the list\'s label (default "trust list")' },
    sequence: { type: 'string', valueName: 'N', description: 'sign: above every earlier list of this operator' },
    days: { type: 'string', valueName: 'D', description: 'sign: days until it expires (default 30, at most 90)' },
    out: { type: 'string', valueName: 'FILE', description: 'sign: where to write the signed list' },
    'trust-operator': { type: 'string', multiple: true, valueName: 'PEER_ID', description: 'show: the operator keys to check the list against (default: its own signer)' },
    ...COMMON_OPTIONS
  },
  details: 'A trust list names peers a network\'s operator vouches for, signed by the operator\'s key; a node\nthat accepts that key (--trust-operator, config trust.operators) and is given the file (--trust-list,\nconfig trust.lists) starts its view of reputation from those peers too (protocols/README.md §7\n"Trust lists"). sign writes one with the data directory\'s key; show verifies and prints one.',
  run: async (values, positionals, out) => {
    const [sub, ...args] = positionals
    if (sub == null || !(SUBCOMMANDS as readonly string[]).includes(sub)) throw new UsageError(`idlegrid trust-list: say one of ${SUBCOMMANDS.join(', ')} (see idlegrid trust-list --help)`)
    if (sub === 'sign') {
      if (args.length > 0) throw new UsageError('idlegrid trust-list sign: takes no positional arguments')
      const peers = (values.peer as string[] | undefined ?? []).map(text => {
        try { return peerIdFromString(text) } catch { throw new UsageError(`idlegrid trust-list sign: --peer ${text} is not a peer id`) }
      })
      if (peers.length === 0) throw new UsageError('idlegrid trust-list sign: give at least one --peer')
      if (values.sequence == null || values.out == null) throw new UsageError('idlegrid trust-list sign: --sequence and --out are required')
      const sequence = asNumber(values.sequence, 'sequence', { integer: true, min: 1 })
      const days = asNumber(values.days ?? 30, 'days', { min: 0.001, max: 90 })
      const key = await loadOrCreateKey(resolve(String(values['data-dir'] ?? process.env.IDLEGRID_DATA_DIR ?? defaultDataDir())))
      const now = Date.now()
      const bytes = sealTrustList(key, peerIdFromPrivateKey(key), { name: String(values.name ?? 'trust list'), sequence: BigInt(sequence), issuedAt: now, expiresAt: now + Math.round(days * DAY_MS), peers })
      // what a node will check: refuse to write a list no node would adopt
      const list = openTrustList(bytes, { operators: new Set([peerIdFromPrivateKey(key).toString()]), now })
      await writeFile(String(values.out), bytes)
      out.data({ ...list, sequence: list.sequence.toString(), envelope: undefined, file: values.out })
      out.info(`signed trust list "${list.name}" (sequence ${list.sequence}, ${list.peers.length} peers, expires ${new Date(list.expiresAt).toISOString()}) as operator ${list.operator} → ${String(values.out)}`)
      return EXIT.ok
    }
    if (args.length !== 1) throw new UsageError('idlegrid trust-list show: give one FILE')
    const bytes = await readFile(args[0])
    if (bytes.byteLength > MAX_TRUST_LIST_BYTES) throw trustListRejected('oversized', `${args[0]}: ${bytes.byteLength} bytes exceeds the ${MAX_TRUST_LIST_BYTES}-byte bound`)
    const operators = values['trust-operator'] as string[] | undefined
    // without accepted keys given: check everything but who signed it, then name the signer
    const accept = operators ?? [signerOf(bytes)]
    const list = openTrustList(bytes, {
      operators: new Set(accept.map(k => peerIdFromString(k).toString())),
      now: Date.now()
    })
    out.data({ ...list, sequence: list.sequence.toString(), envelope: undefined })
    out.info(`trust list "${list.name}" of operator ${list.operator}${operators == null ? ' (signature valid; pass --trust-operator to check the signer too)' : ' (an accepted operator)'}`)
    out.info(`  sequence ${list.sequence}, issued ${new Date(list.issuedAt).toISOString()}, expires ${new Date(list.expiresAt).toISOString()}`)
    for (const p of list.peers) out.info(`  peer ${p}`)
    return EXIT.ok
  }
}

/** The signer a list claims (its signature is verified by openTrustList right after). */
function signerOf (bytes: Uint8Array): string {
  try {
    return openEnvelopeUnverified(bytes, { domain: DOMAIN.trustList, maxBytes: MAX_TRUST_LIST_BYTES }).signer.toString()
  } catch (err) {
    throw trustListRejected('malformed', `trust list envelope: ${(err as Error).message}`)
  }
}
