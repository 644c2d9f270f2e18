/**
 * Cost of decodeBounded's normalisation pass (protocols/normalise.ts), which every received
 * message goes through before protons decodes it, beside protons' decode of the same bytes:
 * ordinary large messages, the worst case per byte (a 4 MiB sync response of two million
 * two-byte unknown fields) and a merge (a JobRequest with constraints sent 100 times).
 */
import { SyncResponse } from '../../protocols/ledger.js'
import { JobRequest } from '../../protocols/market.js'
import { normalise, shapeOf } from '../../protocols/normalise.js'

function msPerRun (fn: () => unknown, runs: number): number {
  fn()
  const started = performance.now()
  for (let i = 0; i < runs; i++) fn()
  return Number(((performance.now() - started) / runs).toFixed(3))
}

export default async (): Promise<Record<string, unknown>> => {
  const heads = SyncResponse.encode({
    heads: {
      heads: Array.from({ length: 10_000 }, (_, i) => ({
        author: new Uint8Array(38),
        seq: BigInt(i),
        hash: new Uint8Array(32)
      })),
      more: false,
      answersRanges: false
    }
  })
  const entries = SyncResponse.encode({
    entries: { entries: Array.from({ length: 256 }, () => new Uint8Array(16_000)), more: false }
  })
  const unknown = new Uint8Array(4 * 1024 * 1024)
  for (let i = 0; i < unknown.length; i += 2) unknown[i] = 0x78 // field 15, varint 0
  const constraints = JobRequest.Constraints.encode({ minVramMib: 1, gpuModels: [], regions: [], residency: 'eu', maxPriceMicroUsd: 0n, maxLatencyMs: 0, minReliabilityPpm: 0, preemptible: false, minPreemptionNoticeMs: 0, excludeSimulated: false })
  const repeated = Uint8Array.from(Array.from({ length: 100 }, () => [0x3a, constraints.length, ...constraints]).flat())
  const figures: Record<string, unknown> = {}
  const cases: Array<[string, Uint8Array, unknown, (b: Uint8Array) => unknown]> = [
    ['syncHeads10k', heads, SyncResponse, b => SyncResponse.decode(b)],
    ['syncEntries256x16KiB', entries, SyncResponse, b => SyncResponse.decode(b)],
    ['unknownFields2M', unknown, SyncResponse, b => SyncResponse.decode(b)],
    ['constraintsSent100Times', repeated, JobRequest, b => JobRequest.decode(b)]
  ]
  for (const [name, bytes, codec, decode] of cases) {
    const shape = shapeOf(codec)
    figures[`${name}Bytes`] = bytes.byteLength
    figures[`${name}NormaliseMs`] = msPerRun(() => normalise(bytes, shape), 5)
    figures[`${name}ProtonsDecodeMs`] = msPerRun(() => decode(bytes), 5)
    figures[`${name}NormalisedBytes`] = normalise(bytes, shape).byteLength
  }
  return figures
}
