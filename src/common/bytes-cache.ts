import { equals } from 'uint8arrays/equals'

interface Slot<T> { key: Uint8Array, value: T }

/** keys kept per bucket: a lookup compares at most this many */
const MAX_BUCKET = 8

/**
 * A bounded cache keyed by short, random-looking byte strings (peer ids: their last bytes are
 * a public key's), looked up without allocating: by a number made of the key's last four bytes,
 * then compared whole. A string key (base64) cost a Buffer view and a string for every entry a
 * sync decodes. When full, the oldest bucket goes.
 */
export class BytesKeyedCache<T> {
  private readonly buckets = new Map<number, Array<Slot<T>>>()
  private count = 0

  constructor (private readonly limit: number) {}

  get (key: Uint8Array): T | undefined {
    const bucket = this.buckets.get(tailNumber(key))
    if (bucket == null) return undefined
    for (const slot of bucket) if (equals(slot.key, key)) return slot.value
    return undefined
  }

  /** Keeps a copy of `key`: a view would keep the whole buffer it came in alive. */
  set (key: Uint8Array, value: T): void {
    const tail = tailNumber(key)
    let bucket = this.buckets.get(tail)
    if (bucket == null) this.buckets.set(tail, bucket = [])
    // keys that share their last bytes (made so, to slow lookups) displace each other
    if (bucket.length >= MAX_BUCKET) {
      bucket.shift()
      this.count--
    }
    bucket.push({ key: new Uint8Array(key), value })
    this.count++
    while (this.count > this.limit) {
      const [oldest, slots] = this.buckets.entries().next().value as [number, Array<Slot<T>>]
      this.buckets.delete(oldest)
      this.count -= slots.length
    }
  }

  get size (): number {
    return this.count
  }
}

function tailNumber (key: Uint8Array): number {
  const n = key.length
  return n < 4 ? -1 - n : ((key[n - 4] << 24) | (key[n - 3] << 16) | (key[n - 2] << 8) | key[n - 1])
}
