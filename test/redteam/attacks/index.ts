/**
 * The attacker program's table of named attacks (`attacker.js <name>`). Each lives in its own
 * file; a new attack is one file and one row here.
 */
import { awardSnipe } from './award-snipe.js'
import { backdatedReceipt } from './backdated-receipt.js'
import { bidFlood } from './bid-flood.js'
import { equivocationFlood } from './equivocation-flood.js'
import { exhaustProvider } from './exhaust-provider.js'
import { forgedSlash } from './forged-slash.js'
import { jobFlush } from './job-flush.js'
import { jobIdHijack } from './job-id-hijack.js'
import { ledgerFlood } from './ledger-flood.js'
import { pricePump } from './price-pump.js'
import { priceProbe } from './price-probe.js'
import { spam } from './spam.js'
import { sybilRing } from './sybil-ring.js'
import { validFlood } from './valid-flood.js'
import type { Attack } from './attack.js'

export const ATTACKS: Readonly<Record<string, Attack>> = {
  'job-id-hijack': jobIdHijack,
  'award-snipe': awardSnipe,
  'price-pump': pricePump,
  'price-probe': priceProbe,
  'bid-flood': bidFlood,
  'forged-slash': forgedSlash,
  'sybil-ring': sybilRing,
  'backdated-receipt': backdatedReceipt,
  'ledger-flood': ledgerFlood,
  'exhaust-provider': exhaustProvider,
  spam,
  'valid-flood': validFlood,
  'job-flush': jobFlush,
  'equivocation-flood': equivocationFlood
}

export type { Attack, AttackContext } from './attack.js'
