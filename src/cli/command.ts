import type { CommandSpec, ParsedValues } from './options.js'
import type { Output } from './output.js'

/** One `idlegrid <name>` command: its options and help, and what it does. Resolves with the exit code. */
export interface Command extends CommandSpec {
  run(values: ParsedValues, positionals: string[], out: Output): Promise<number>
}
