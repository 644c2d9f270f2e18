/**
 * The attacker program's table of named attacks (`attacker.js <name>`). Each lives in its own
 * file; a new attack is one file and one row here.
 */
import { awardSnipe } from './award-snipe.js'
import { bidFlood } from './bid-flood.js'
import { jobIdHijack } from './job-id-hijack.js'
import { pricePump } from './price-pump.js'
import { priceProbe } from './price-probe.js'
import { spam } from './spam.js'
import type { Attack } from './attack.js'

export const ATTACKS: Readonly<Record<string, Attack>> = {
  'job-id-hijack': jobIdHijack,
  'award-snipe': awardSnipe,
  'price-pump': pricePump,
  'price-probe': priceProbe,
  'bid-flood': bidFlood,
  spam
}

export type { Attack, AttackContext } from './attack.js'
