import { demoCommand } from './demo.js'
import { doctorCommand } from './doctor.js'
import { idCommand } from './id.js'
import { initCommand } from './init.js'
import { ledgerCommand } from './ledger.js'
import { marketCommand } from './market.js'
import { reputationCommand } from './reputation.js'
import { bootstrapCommand, providerCommand, renterCommand } from './roles.js'
import { simCommand } from './sim.js'
import { statusCommand } from './status.js'
import { submitCommand } from './submit.js'
import { deployCommand, servicesCommand } from './services.js'
import type { Command } from '../command.js'

/** Every `idlegrid` command, in the order the help lists them. */
export const COMMANDS: Command[] = [
  demoCommand,
  bootstrapCommand,
  providerCommand,
  renterCommand,
  marketCommand,
  submitCommand,
  deployCommand,
  servicesCommand,
  idCommand,
  statusCommand,
  ledgerCommand,
  reputationCommand,
  simCommand,
  initCommand,
  doctorCommand
]
