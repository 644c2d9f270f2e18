/** The p-th percentile (0..1) of an ascending list; NaN when it is empty. */
export function percentile (sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] as number
}
