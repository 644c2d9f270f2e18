/**
 * The trust lists a node adopted (protocols/README.md §7 "Trust lists"): read from the files
 * its config names, each opened by list.ts against the operator keys the node accepts. Of two
 * lists of one operator the higher sequence is used; every list that was not adopted is kept
 * with the reason, for `idlegrid reputation --explain`. A list never stops a node from starting:
 * a refused one simply adds no anchors.
 *
 * The peers of the adopted lists are anchors of this node's view: roots of standing (their
 * feeds and what they name are stored, not quarantined: ingest/standing.ts) for as long as the node
 * runs, and seeds of its trust (reputation/trust.ts) while their list has not expired.
 */

import { openSync, closeSync, fstatSync, readSync } from 'node:fs'
import { MAX_TRUST_LIST_BYTES, openTrustList, type OpenedTrustList, type TrustListRejection } from './list.js'
import { isTrustListError, trustListRejected } from '../../errors.js'

export interface AdoptedList extends OpenedTrustList {
  /** where it came from: a file path */
  source: string
}

export interface RefusedList {
  source: string
  /** 'unreadable': the file could not be read */
  reason: TrustListRejection | 'unreadable'
  message: string
}

/** A list as `reputation --explain` shows it. */
export interface TrustListView {
  operator: string
  name: string
  sequence: string
  issuedAt: number
  expiresAt: number
  peers: number
  source: string
  /** counting: its peers are seeds now; expired since it was adopted: they count for nothing */
  status: 'counting' | 'expired'
}

export interface TrustListInput {
  source: string
  bytes: Uint8Array
}

export class TrustAnchors {
  readonly lists: readonly AdoptedList[]
  readonly refused: readonly RefusedList[]

  constructor (lists: readonly AdoptedList[] = [], refused: readonly RefusedList[] = []) {
    this.lists = lists
    this.refused = refused
  }

  /**
   * Opens each input against the accepted operator keys at `now`; of several valid lists of
   * one operator keeps the highest sequence (a tie: the first given).
   */
  static adopt (
    inputs: readonly TrustListInput[],
    opts: { operators: Iterable<string>, now: number },
    unreadable: readonly RefusedList[] = []
  ): TrustAnchors {
    const operators = new Set(opts.operators)
    const refused: RefusedList[] = [...unreadable]
    const best = new Map<string, AdoptedList>()
    for (const { source, bytes } of inputs) {
      let list: OpenedTrustList
      try {
        list = openTrustList(bytes, { operators, now: opts.now })
      } catch (err) {
        const e = isTrustListError(err) ? err : trustListRejected('malformed', String(err))
        refused.push({ source, reason: e.reason, message: e.message })
        continue
      }
      const held = best.get(list.operator)
      if (held == null || list.sequence > held.sequence) {
        if (held != null) refused.push(superseded(held, list.sequence))
        best.set(list.operator, { ...list, source })
      } else {
        refused.push(superseded({ ...list, source }, held.sequence))
      }
    }
    return new TrustAnchors([...best.values()], refused)
  }

  /** The peers of every adopted list not expired at `now`: seeds of trust. */
  peersAt (now: number): string[] {
    return [...new Set(this.lists.filter(l => l.expiresAt > now).flatMap(l => l.peers))]
  }

  /** The peers of every adopted list: roots of standing for the node's run. */
  allPeers (): string[] {
    return [...new Set(this.lists.flatMap(l => l.peers))]
  }

  /** The adopted lists, valid at `now`, that name `peer`. */
  listsNaming (peer: string, now: number): AdoptedList[] {
    return this.lists.filter(l => l.expiresAt > now && l.peers.includes(peer))
  }

  describe (now: number): TrustListView[] {
    return this.lists.map(l => ({
      operator: l.operator,
      name: l.name,
      sequence: l.sequence.toString(),
      issuedAt: l.issuedAt,
      expiresAt: l.expiresAt,
      peers: l.peers.length,
      source: l.source,
      status: l.expiresAt > now ? 'counting' : 'expired'
    }))
  }
}

function superseded (list: AdoptedList, by: bigint): RefusedList {
  return { source: list.source, reason: 'superseded', message: `trust list "${list.name}" of ${list.operator}, sequence ${list.sequence}, is superseded by its sequence ${by}` }
}

/**
 * Reads the list files the config names (each refused unread past MAX_TRUST_LIST_BYTES) and
 * adopts those an accepted operator signed. Synchronous: a few small files, once, while the
 * node is built.
 */
export function loadTrustLists (files: readonly string[], operators: Iterable<string>, now = Date.now()): TrustAnchors {
  const inputs: TrustListInput[] = []
  const unreadable: RefusedList[] = []
  for (const file of files) {
    try {
      inputs.push({ source: file, bytes: readBounded(file) })
    } catch (err) {
      if (isTrustListError(err)) unreadable.push({ source: file, reason: err.reason, message: err.message })
      else unreadable.push({ source: file, reason: 'unreadable', message: `trust list file ${file}: ${(err as Error).message}` })
    }
  }
  return TrustAnchors.adopt(inputs, { operators, now }, unreadable)
}

function readBounded (file: string): Uint8Array {
  const fd = openSync(file, 'r')
  try {
    const size = fstatSync(fd).size
    if (size > MAX_TRUST_LIST_BYTES) throw trustListRejected('oversized', `trust list file ${file} of ${size} bytes exceeds the ${MAX_TRUST_LIST_BYTES}-byte bound`)
    const out = new Uint8Array(size)
    let read = 0
    while (read < size) {
      const n = readSync(fd, out, read, size - read, read)
      if (n === 0) break
      read += n
    }
    return out.subarray(0, read)
  } finally {
    closeSync(fd)
  }
}
