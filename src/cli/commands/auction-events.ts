import { shortPeerId } from '../../common/index.js'
import { printable } from '../../exec/index.js'

/**
 * The one line printed for an auction progress event, or undefined for events not worth a
 * line. Provider-sent text (decline reasons) is escaped before it reaches the terminal.
 * `bids`: whether each incoming bid gets a line (the auction-only view) or not (a full job run).
 */
export function auctionEventLine (event: Record<string, unknown>, opts: { bids: boolean }): string | undefined {
  switch (event.type) {
    case 'published': return `job ${String(event.jobId)} published`
    case 'bid': return opts.bids ? `bid ${Number(event.price).toFixed(2)} USD/GPU-h from ${shortPeerId(String(event.provider))}` : undefined
    case 'award': return `award #${String(event.attempt)} to ${shortPeerId(String(event.winner))} at ${Number(event.price).toFixed(2)} USD/GPU-h; waiting for acceptance…`
    case 'accept': return event.outcome === 'accepted' ? undefined : `${shortPeerId(String(event.winner))} ${String(event.outcome)}${event.reason != null ? `: ${printable(String(event.reason))}` : ''}; failing over`
    case 'explain': return `asking ${String(event.asked)} providers why they did not bid…`
    default: return undefined
  }
}
