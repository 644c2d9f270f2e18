/**
 * GPU telemetry during a job: samples `nvidia-smi` (temperature, utilisation, power draw) for
 * the job's GPUs and summarises the run for the attestation: mean utilisation, highest
 * temperature, energy (power integrated over time), over every GPU of a multi-GPU job. A
 * simulated GPU's summary says so.
 */
import type { GpuTelemetry } from '../../capability/index.js'

export interface TelemetrySummary {
  /** mean utilisation, ppm */
  avgUtilPpm: number
  maxTempC: number
  /** millijoules */
  energyMj: bigint
  samples: number
  simulated: boolean
}

export type TelemetryRead = () => Promise<GpuTelemetry[]>

export interface SamplerOptions {
  gpuIndex: number
  /**
   * every GPU of a multi-GPU job (default [gpuIndex]): one sample is their mean utilisation,
   * highest temperature and summed power
   */
  gpuIndices?: readonly number[]
  simulated: boolean
  /** reads every GPU's telemetry (readGpuTelemetry, or a fake for tests); none: no samples */
  read?: TelemetryRead
  /** default 1000 ms */
  intervalMs?: number
  now?: () => number
}

/** Running aggregates, so a long job keeps constant memory. */
export class TelemetryAccumulator {
  private utilSum = 0
  private utilCount = 0
  private maxTemp = 0
  private energyMj = 0
  private last?: { at: number, powerW?: number }
  samples = 0

  add (sample: GpuTelemetry, at: number): void {
    this.samples++
    if (sample.utilizationPct != null) {
      this.utilSum += Math.min(100, Math.max(0, sample.utilizationPct))
      this.utilCount++
    }
    if (sample.temperatureC != null) this.maxTemp = Math.max(this.maxTemp, Math.round(sample.temperatureC))
    // trapezoid between consecutive samples: W × ms = mJ
    if (this.last?.powerW != null && sample.powerDrawW != null && at > this.last.at) {
      this.energyMj += (this.last.powerW + sample.powerDrawW) / 2 * (at - this.last.at)
    }
    this.last = { at, powerW: sample.powerDrawW }
  }

  summary (simulated: boolean): TelemetrySummary {
    return {
      avgUtilPpm: this.utilCount === 0 ? 0 : Math.round(this.utilSum / this.utilCount * 10_000),
      maxTempC: this.maxTemp,
      energyMj: BigInt(Math.round(this.energyMj)),
      samples: this.samples,
      simulated
    }
  }
}

/**
 * One sample of a job's GPUs: their mean utilisation, highest temperature and total power
 * (total only when every one reported it); undefined when none of them was read.
 */
function combine (all: readonly GpuTelemetry[], indices: readonly number[]): GpuTelemetry | undefined {
  const mine = all.filter(t => indices.includes(t.index))
  if (mine.length <= 1) return mine[0]
  const utils = mine.flatMap(t => t.utilizationPct ?? [])
  const temps = mine.flatMap(t => t.temperatureC ?? [])
  const powers = mine.flatMap(t => t.powerDrawW ?? [])
  return {
    index: indices[0] as number,
    utilizationPct: utils.length === 0 ? undefined : utils.reduce((a, b) => a + b, 0) / utils.length,
    temperatureC: temps.length === 0 ? undefined : Math.max(...temps),
    powerDrawW: powers.length === mine.length ? powers.reduce((a, b) => a + b, 0) : undefined
  }
}

/** Samples the job's GPUs at an interval while it runs; `stop()` returns the summary. */
export class TelemetrySampler {
  private readonly opts: SamplerOptions
  private readonly acc = new TelemetryAccumulator()
  private timer?: NodeJS.Timeout
  private inFlight?: Promise<void>
  private stopped = false
  /** read failures, for the provider's log */
  errors = 0

  constructor (opts: SamplerOptions) {
    this.opts = opts
  }

  start (): void {
    if (this.opts.read == null) return
    void this.sample()
    this.timer = setInterval(() => { if (this.inFlight == null) void this.sample() }, this.opts.intervalMs ?? 1000)
    this.timer.unref()
  }

  async stop (): Promise<TelemetrySummary> {
    this.stopped = true
    clearInterval(this.timer)
    await this.inFlight
    return this.acc.summary(this.opts.simulated)
  }

  private async sample (): Promise<void> {
    const read = this.opts.read
    if (read == null || this.stopped) return
    const p = (async () => {
      try {
        const all = await read()
        const mine = combine(all, this.opts.gpuIndices ?? [this.opts.gpuIndex])
        if (mine != null && !this.stopped) this.acc.add(mine, (this.opts.now ?? Date.now)())
      } catch {
        this.errors++
      }
    })()
    this.inFlight = p
    await p
    if (this.inFlight === p) this.inFlight = undefined
  }
}
