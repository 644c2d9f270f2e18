/**
 * The baseline's prices: public on-demand list prices per GPU-hour, as the author knows them
 * (no browsing was possible when this was written; they are the well-known 2023–2024 list
 * prices, US regions, Linux, before any later cuts). Per-GPU figures are the instance price
 * divided by its GPUs. Sources (provider, page name):
 *
 *   AWS "Amazon EC2 On-Demand Pricing", us-east-1:
 *     p3.2xlarge   1× V100 16 GB   $3.06/h
 *     p3dn.24xlarge 8× V100 32 GB  $31.212/h  → $3.90 per GPU
 *     g4dn.xlarge  1× T4           $0.526/h
 *     g5.xlarge    1× A10G         $1.006/h
 *     p4d.24xlarge 8× A100 40 GB   $32.77/h   → $4.10 per GPU
 *     p5.48xlarge  8× H100 80 GB   $98.32/h   → $12.29 per GPU
 *   Google Cloud "GPU pricing" (Compute Engine), us-central1, GPU only:
 *     NVIDIA P100 $1.46/h;  a2-highgpu-1g (1× A100 40 GB, whole VM) $3.67/h
 *
 * The trace's undisclosed G2 and G3 GPUs are priced as a V100 16 GB and a V100 32 GB: an
 * assumption, stated in the report.
 */

export interface ListPrice { usdPerGpuHour: number, source: string }

export const LIST_PRICES: Record<string, ListPrice> = {
  'p100-16gb': { usdPerGpuHour: 1.46, source: 'Google Cloud GPU pricing, NVIDIA P100, us-central1' },
  't4-16gb': { usdPerGpuHour: 0.526, source: 'AWS EC2 On-Demand, g4dn.xlarge, us-east-1' },
  'v100-16gb': { usdPerGpuHour: 3.06, source: 'AWS EC2 On-Demand, p3.2xlarge, us-east-1' },
  'v100-32gb': { usdPerGpuHour: 3.90, source: 'AWS EC2 On-Demand, p3dn.24xlarge / 8, us-east-1' },
  'a10-24gb': { usdPerGpuHour: 1.006, source: 'AWS EC2 On-Demand, g5.xlarge (A10G), us-east-1' },
  'a100-40gb': { usdPerGpuHour: 4.10, source: 'AWS EC2 On-Demand, p4d.24xlarge / 8, us-east-1' },
  'h100-80gb': { usdPerGpuHour: 12.29, source: 'AWS EC2 On-Demand, p5.48xlarge / 8, us-east-1' },
  g2: { usdPerGpuHour: 3.06, source: 'assumed V100 16 GB class (undisclosed in the trace)' },
  g3: { usdPerGpuHour: 3.90, source: 'assumed V100 32 GB class (undisclosed in the trace)' }
}

/** On-demand list price of a model key, USD per GPU-hour (the V100 16 GB price for an unknown model). */
export function listPriceUsd (modelKey: string): number {
  return (LIST_PRICES[modelKey] ?? LIST_PRICES['v100-16gb'] as ListPrice).usdPerGpuHour
}
