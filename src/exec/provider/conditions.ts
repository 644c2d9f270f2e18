/**
 * Watches the provider's availability windows and its GPUs' temperature and power draw, and
 * pauses the scheduler (which preempts bronze work and stops bidding) while a window is
 * closed or a limit is exceeded; it resumes once they clear.
 */
import type { SlotScheduler } from './scheduler.js'
import type { TelemetryRead } from './telemetry.js'

export interface ConditionOptions {
  /** true while the provider is inside an availability window */
  available?: (now: number) => boolean
  /** reads every GPU's telemetry; needed for the thermal and power limits */
  read?: TelemetryRead
  maxTemperatureC?: number
  maxPowerWatts?: number
  /** default 15 s */
  intervalMs?: number
  /** a limit clears only this far below it (°C / W), so the state does not flap; default 3 */
  hysteresis?: number
}

export class ConditionMonitor {
  private timer?: NodeJS.Timeout
  private running?: Promise<void>

  constructor (private readonly scheduler: SlotScheduler, private readonly opts: ConditionOptions) {}

  start (): void {
    void this.check()
    this.timer = setInterval(() => { if (this.running == null) void this.check() }, this.opts.intervalMs ?? 15_000)
    this.timer.unref()
  }

  stop (): void {
    clearInterval(this.timer)
  }

  /** One check now; also what the timer runs. */
  async check (now = Date.now()): Promise<void> {
    const p = this.checkOnce(now)
    this.running = p
    try { await p } finally { this.running = undefined }
  }

  private async checkOnce (now: number): Promise<void> {
    if (this.opts.available != null) {
      const open = this.opts.available(now)
      this.scheduler.setPause('window', !open, 'outside the availability window')
    }
    if (this.opts.read == null || (this.opts.maxTemperatureC == null && this.opts.maxPowerWatts == null)) return
    let samples
    try {
      samples = await this.opts.read()
    } catch {
      return // a failed read changes nothing; the next one decides
    }
    const h = this.opts.hysteresis ?? 3
    const paused = new Set(this.scheduler.capacity().paused)
    if (this.opts.maxTemperatureC != null) {
      const hottest = Math.max(0, ...samples.map(s => s.temperatureC ?? 0))
      const limit = this.opts.maxTemperatureC - (paused.has('thermal') ? h : 0)
      this.scheduler.setPause('thermal', hottest >= limit, `GPU at ${hottest} °C, limit ${this.opts.maxTemperatureC} °C`)
    }
    if (this.opts.maxPowerWatts != null) {
      const draw = samples.reduce((sum, s) => sum + (s.powerDrawW ?? 0), 0)
      const limit = this.opts.maxPowerWatts - (paused.has('power') ? h : 0)
      this.scheduler.setPause('power', draw >= limit, `GPUs draw ${Math.round(draw)} W, limit ${this.opts.maxPowerWatts} W`)
    }
  }
}
