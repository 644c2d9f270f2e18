import type { CommandSpec, ParsedValues } from './options.js'
import type { Output } from './output.js'

/** One `idlegrid <name>` command: its options and help, and what it does. Resolves with the exit code. */
export interface Command extends CommandSpec {
  run(values: ParsedValues, positionals: string[], out: Output): Promise<number>
}

/** A command as its module defines it: everything but the one-line summary, which the command list holds. */
export type CommandDefinition = Omit<Command, 'summary'>

/** A command in the list: what the program's help shows, and how to load the rest when it runs. */
export interface CommandEntry {
  name: string
  summary: string
  load: () => Promise<CommandDefinition>
}
