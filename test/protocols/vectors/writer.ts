/** Hand-made protobuf encodings (field order, packing, unknown fields) that codecs never write. */

export class Writer {
  private readonly out: number[] = []
  varint (v: bigint): this {
    for (;;) {
      if (v < 0x80n) { this.out.push(Number(v)); return this }
      this.out.push(Number(v & 0x7fn) | 0x80)
      v >>= 7n
    }
  }

  varintField (field: number, v: bigint): this { return this.varint(BigInt(field << 3)).varint(v) }
  bytesField (field: number, b: Uint8Array): this {
    this.varint(BigInt((field << 3) | 2)).varint(BigInt(b.length))
    this.out.push(...b)
    return this
  }

  bytes (): Uint8Array { return Uint8Array.from(this.out) }
}

/** An unknown length-delimited field 1000 of `n` zero bytes: decoders skip it. */
export function unknownField (n: number): Uint8Array {
  return new Writer().bytesField(1000, new Uint8Array(n)).bytes()
}
