/**
 * The baseline's prices: public on-demand list prices per GPU-hour, US regions, Linux. Per-GPU
 * figures are the instance price divided by its GPUs.
 *
 * UNVERIFIED. These are the well-known 2023–2024 list prices as the author recalls them; no
 * session could open the providers' pages to check them (no network), so none carries a date
 * of the price. The pages to check them against:
 *
 *   AWS  https://aws.amazon.com/ec2/pricing/on-demand/  (region US East (N. Virginia), Linux)
 *     p3.2xlarge    1× V100 16 GB   $3.06/h
 *     p3dn.24xlarge 8× V100 32 GB   $31.212/h  → $3.90 per GPU
 *     g4dn.xlarge   1× T4           $0.526/h
 *     g5.xlarge     1× A10G         $1.006/h
 *     p4d.24xlarge  8× A100 40 GB   $32.77/h   → $4.10 per GPU
 *     p5.48xlarge   8× H100 80 GB   $98.32/h   → $12.29 per GPU
 *   Google Cloud  https://cloud.google.com/compute/gpus-pricing  (us-central1, GPU only)
 *     NVIDIA P100 $1.46/h
 *
 * Only one figure was seen again, on a third-party page, not AWS's: g5.xlarge $1.006/h in
 * us-east-1 "June 2026" (https://www.factualminds.com/blog/amazon-ec2-on-demand-pricing-instance-families-2026/,
 * published 2026-06-17). AWS has since cut some GPU instance prices (P4 and P5 families in
 * 2025, as the author recalls): the A100 and H100 figures may be high, which flatters the
 * market's savings on those GPUs. The trace's undisclosed G2 and G3 GPUs are priced as a
 * V100 16 GB and a V100 32 GB: an assumption, stated in the report.
 */

/** `page`: where the price is published; `checked`: whether a session saw it there (none has: 'unverified') */
export interface ListPrice { usdPerGpuHour: number, source: string, page: string, checked: 'unverified' | 'assumption' }

export const LIST_PRICES: Record<string, ListPrice> = {
  'p100-16gb': { usdPerGpuHour: 1.46, source: 'Google Cloud GPU pricing, NVIDIA P100, us-central1', page: 'https://cloud.google.com/compute/gpus-pricing', checked: 'unverified' },
  't4-16gb': { usdPerGpuHour: 0.526, source: 'AWS EC2 On-Demand, g4dn.xlarge, us-east-1', page: 'https://aws.amazon.com/ec2/pricing/on-demand/', checked: 'unverified' },
  'v100-16gb': { usdPerGpuHour: 3.06, source: 'AWS EC2 On-Demand, p3.2xlarge, us-east-1', page: 'https://aws.amazon.com/ec2/pricing/on-demand/', checked: 'unverified' },
  'v100-32gb': { usdPerGpuHour: 3.90, source: 'AWS EC2 On-Demand, p3dn.24xlarge / 8, us-east-1', page: 'https://aws.amazon.com/ec2/pricing/on-demand/', checked: 'unverified' },
  'a10-24gb': { usdPerGpuHour: 1.006, source: 'AWS EC2 On-Demand, g5.xlarge (A10G), us-east-1', page: 'https://aws.amazon.com/ec2/pricing/on-demand/', checked: 'unverified' },
  'a100-40gb': { usdPerGpuHour: 4.10, source: 'AWS EC2 On-Demand, p4d.24xlarge / 8, us-east-1', page: 'https://aws.amazon.com/ec2/pricing/on-demand/', checked: 'unverified' },
  'h100-80gb': { usdPerGpuHour: 12.29, source: 'AWS EC2 On-Demand, p5.48xlarge / 8, us-east-1', page: 'https://aws.amazon.com/ec2/pricing/on-demand/', checked: 'unverified' },
  g2: { usdPerGpuHour: 3.06, source: 'assumed V100 16 GB class (undisclosed in the trace)', page: '', checked: 'assumption' },
  g3: { usdPerGpuHour: 3.90, source: 'assumed V100 32 GB class (undisclosed in the trace)', page: '', checked: 'assumption' }
}

/** On-demand list price of a model key, USD per GPU-hour (the V100 16 GB price for an unknown model). */
export function listPriceUsd (modelKey: string): number {
  return (LIST_PRICES[modelKey] ?? LIST_PRICES['v100-16gb'] as ListPrice).usdPerGpuHour
}
