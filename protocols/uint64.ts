/**
 * A repair of protons-runtime 5.6.0's uint64 writer, applied once when protocols/ loads.
 *
 * Its LongBits keeps the low word signed, so for a value in [2^31, 2^32) writeVarint64 writes
 * one byte where the length it reserved is five, and the other four are whatever the buffer
 * held: a 2–4 GiB file's size or offset went out garbled (and a decoder then read past the
 * field). Values outside that range are written right and keep the library's path; these go
 * through the writer's own uint64Number (uint8-varint), which is exact below 2^53. The spec
 * test/protocols/uint64.spec.ts fails when the repair is missing, and says so once the library
 * writes the range right by itself (then this file can go).
 */

import { writer } from 'protons-runtime'

const LOW = 2n ** 31n
const HIGH = 2n ** 32n

interface Uint64Writer {
  uint64: (value: bigint) => unknown
  uint64Number: (value: number) => unknown
}

const proto = Object.getPrototypeOf(writer()) as Uint64Writer & { libraryUint64?: Uint64Writer['uint64'] }
if (proto.libraryUint64 == null) {
  const original = proto.uint64
  proto.libraryUint64 = original
  proto.uint64 = function (this: Uint64Writer, value: bigint) {
    return value >= LOW && value < HIGH ? this.uint64Number(Number(value)) : original.call(this, value)
  }
}

/** `value` as the library's own uint64 writer writes it, without the repair (for the spec). */
export function libraryEncodingOf (value: bigint): Uint8Array {
  const w = writer() as unknown as Uint64Writer & { finish: () => Uint8Array }
  proto.libraryUint64?.call(w, value)
  return w.finish()
}
