/**
 * When a synced range is verified (ingest.ts): once the range handed in before it is being
 * placed, not as it arrives. A fresh node pulls several feeds at once; ranges verified as they
 * came waited for the writes before them decoded (a range's records are kilobytes an entry) and
 * outlived the young generation. One range verified while the one before is placed and written
 * keeps verification beside the writes.
 */
export interface RangeTurn {
  /** resolves when this range may be verified */
  ready: Promise<void>
  /** this range is being placed (or will never be): the next one may be verified */
  placing: () => void
}

export class RangeTurns {
  private last: Promise<void> = Promise.resolve()

  /** The next range's turn, after every range taken before it. */
  take (): RangeTurn {
    const ready = this.last
    let placing = (): void => {}
    this.last = new Promise<void>(resolve => { placing = resolve })
    return { ready, placing }
  }
}
