/**
 * Rows for the tables `npm run redteam` and `npm run chaos` print: a spec says, after it ran,
 * what it measured. Under those scripts (an env variable names a file) each row is appended as
 * one JSON line; in a plain test run nothing is written.
 */
import { appendFileSync } from 'node:fs'

/** Appends `row` to the file named by the env variable `fileVar`, if it is set. */
export function appendRow (fileVar: string, row: object): void {
  const out = process.env[fileVar]
  if (out == null || out === '') return
  appendFileSync(out, JSON.stringify(row) + '\n')
}
