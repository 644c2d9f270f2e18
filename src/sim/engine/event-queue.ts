/**
 * The discrete-event queue: events in virtual time, earliest first, and in the order they were
 * scheduled when times are equal (a sequence number), so a run never depends on heap layout.
 * A binary heap over parallel arrays: a million pending events cost a few tens of MB.
 */

export class EventQueue<E> {
  private times: number[] = []
  private seqs: number[] = []
  private items: E[] = []
  private seq = 0

  get size (): number {
    return this.items.length
  }

  push (time: number, item: E): void {
    let i = this.items.length
    this.times.push(time)
    this.seqs.push(this.seq++)
    this.items.push(item)
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.less(i, parent)) break
      this.swap(i, parent)
      i = parent
    }
  }

  /** time of the earliest event, or Infinity */
  peekTime (): number {
    return this.items.length === 0 ? Infinity : this.times[0] as number
  }

  /** the time of the event pop() returned last */
  poppedTime = 0

  /** removes and returns the earliest event (its time is then poppedTime; no pair is made per event) */
  pop (): E | undefined {
    const n = this.items.length
    if (n === 0) return undefined
    this.poppedTime = this.times[0] as number
    const out = this.items[0] as E
    this.swap(0, n - 1)
    this.times.pop()
    this.seqs.pop()
    this.items.pop()
    let i = 0
    const size = n - 1
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < size && this.less(l, m)) m = l
      if (r < size && this.less(r, m)) m = r
      if (m === i) break
      this.swap(i, m)
      i = m
    }
    return out
  }

  private less (a: number, b: number): boolean {
    const ta = this.times[a] as number
    const tb = this.times[b] as number
    return ta < tb || (ta === tb && (this.seqs[a] as number) < (this.seqs[b] as number))
  }

  private swap (a: number, b: number): void {
    const t = this.times[a] as number; this.times[a] = this.times[b] as number; this.times[b] = t
    const s = this.seqs[a] as number; this.seqs[a] = this.seqs[b] as number; this.seqs[b] = s
    const x = this.items[a] as E; this.items[a] = this.items[b] as E; this.items[b] = x
  }
}
