#!/usr/bin/env node
/**
 * Fits TypeScript and JavaScript files into 120 columns, the limit `@stylistic/max-len` enforces
 * (issue 42), without changing what the code does. Repeatable: run it again after a merge.
 *
 *   node scripts/fit-columns.mjs [--write] [--prettier DIR] [--quiet] FILE|DIR…
 *
 * Without --write it only reports. For each file, in this order:
 * 1. comments: scripts/wrap-comments.mjs re-wraps over-long comment lines (and, with --trailing's
 *    rule, moves a trailing `//` comment above its code when the code alone then fits);
 * 2. code: every line the max-len rule still flags (the options are read from eslint.config.js,
 *    so strings, templates, regular expressions and URLs are exempt as the linter exempts them)
 *    has the smallest statement or class/interface member holding it formatted by prettier,
 *    with options close to neostandard (no semicolons, single quotes, no trailing commas,
 *    `arrowParens: 'avoid'`, 118 columns to leave room for the spaces neostandard adds). Inner
 *    statements, members and object properties that do not touch the line stand in as
 *    placeholders meanwhile and come back verbatim, so a long method signature does not
 *    reformat the method's body. Where no such statement holds the line, prettier's own range
 *    formatting (`rangeStart`/`rangeEnd` around the line) does it. Lines are taken from the last
 *    to the first, so each is found in text nothing has moved yet;
 * 3. style: a few habits of prettier are taken back (`houseStyle`: braces round a body moved to
 *    its own line, `{ a: A, b: B }` types …), then the fixes of neostandard's `@stylistic/*`
 *    rules and `curly` (an `eslint --fix` limited to layout, run in-process without type
 *    information) bring the rest back to the house style (`function f () {}`, indentation …).
 *
 * Nothing is written unless the file still means the same: both versions are parsed by
 * TypeScript and their syntax trees must be identical once parentheses, semicolons, trailing
 * commas and the braces round a single-statement `if`/loop body are left out (strings and
 * numbers compared by value), and their comments must
 * hold the same words in the same order. A range whose result fails that check is left as it
 * was (the rest of the file still goes on); so is a statement under an `@ts-…` or
 * `eslint-disable-next-line` directive, whose target line would move. What is still too long
 * afterwards (an identifier chain prettier cannot break, a comment with a word longer than a
 * line) is listed as `file:line: length` for a person to fix.
 *
 * Run it after a merge on the files the merge touched (or the whole tree: about 3 minutes for
 * 1,600 lines on two busy cores; a tree that already fits is checked in well under a minute):
 *
 *   node scripts/fit-columns.mjs --write src test scripts protocols/{codec,normalise,packed,uint64,ids}.ts
 *
 * Prettier is not a dependency of the project: the script imports it from --prettier DIR, or
 * $PRETTIER_DIR, or ~/.cache/idlegrid/prettier (a folder where `npm install prettier@3` was run).
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import ts from 'typescript'
import { Linter } from 'eslint'
import neostandard from 'neostandard'
import { listFiles, commentRanges, commentWords, parse, wrapText, isJSDoc } from './wrap-comments.mjs'

const DEFAULT_MAX_LEN = ['error', {
  code: 120,
  ignoreUrls: true,
  ignoreStrings: true,
  ignoreTemplateLiterals: true,
  ignoreRegExpLiterals: true,
  ignoreComments: false
}]
const DIRECTIVE = /@ts-(?:expect-error|ignore|nocheck)|eslint-disable-next-line|eslint-disable-line|prettier-ignore/

const PRETTIER_OPTIONS = {
  parser: 'typescript',
  semi: false,
  singleQuote: true,
  trailingComma: 'none',
  printWidth: 120,
  tabWidth: 2,
  useTabs: false,
  arrowParens: 'avoid',
  bracketSpacing: true,
  bracketSameLine: false,
  quoteProps: 'as-needed',
  endOfLine: 'lf',
  // never reformat the inside of a template (css`…`, html`…`): its text is a string
  embeddedLanguageFormatting: 'off'
}

function parseArgs (argv) {
  const options = { write: false, quiet: false, prettier: process.env.PRETTIER_DIR ?? join(homedir(), '.cache', 'idlegrid', 'prettier'), paths: [] }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--write') options.write = true
    else if (arg === '--quiet') options.quiet = true
    else if (arg === '--prettier') options.prettier = argv[++i]
    else if (arg.startsWith('--')) throw new Error(`unknown option ${arg}`)
    else options.paths.push(arg)
  }
  return options
}

async function loadPrettier (dir) {
  const entry = join(resolve(dir), 'node_modules', 'prettier', 'index.mjs')
  if (!existsSync(entry)) {
    throw new Error(`prettier not found at ${entry}: run \`mkdir -p ${dir} && cd ${dir} && npm init -y && npm install prettier@3\`, or pass --prettier DIR`)
  }
  return await import(pathToFileURL(entry).href)
}

/** The `@stylistic/max-len` options of the project's eslint.config.js, or the issue's defaults while it has none. */
async function maxLenRule () {
  const path = resolve('eslint.config.js')
  if (!existsSync(path)) return DEFAULT_MAX_LEN
  const config = (await import(pathToFileURL(path).href)).default
  const entry = config.findLast(c => c.rules?.['@stylistic/max-len'] != null)
  return entry?.rules['@stylistic/max-len'] ?? DEFAULT_MAX_LEN
}

/** Bodies that may lose or gain their braces (`curly`) around a single statement without changing what runs. */
const BODY_OF = new Set([ts.SyntaxKind.IfStatement, ts.SyntaxKind.ForStatement, ts.SyntaxKind.ForInStatement,
  ts.SyntaxKind.ForOfStatement, ts.SyntaxKind.WhileStatement, ts.SyntaxKind.DoStatement])

/**
 * A file's syntax tree as text: node kinds nested, leaves by kind and text. Left out: JSDoc,
 * parentheses (the nodes they group stay), semicolons (statements are nodes), trailing commas
 * (holes in arrays are nodes), and the braces of an `if`/loop body that holds a single statement.
 * Strings and numbers are compared by value, so `'a'` and `"a"` agree.
 */
function shape (sourceFile) {
  const out = []
  const visit = node => {
    if (isJSDoc(node)) return
    if (node.kind === ts.SyntaxKind.ParenthesizedExpression || node.kind === ts.SyntaxKind.ParenthesizedType) {
      visit(node.expression ?? node.type)
      return
    }
    if (node.kind === ts.SyntaxKind.Block && node.statements.length === 1 && BODY_OF.has(node.parent?.kind)) {
      visit(node.statements[0])
      return
    }
    const children = node.getChildren(sourceFile)
    if (children.length === 0) {
      const kind = node.kind
      if (
        kind === ts.SyntaxKind.SemicolonToken ||
        kind === ts.SyntaxKind.OpenParenToken ||
        kind === ts.SyntaxKind.CloseParenToken
      ) {
        return
      }
      if (kind === ts.SyntaxKind.StringLiteral) out.push(`s:${JSON.stringify(node.text)}`)
      else if (kind === ts.SyntaxKind.NumericLiteral) out.push(`n:${Number(node.text)}`)
      else out.push(`${kind}:${node.getText(sourceFile)}`)
      return
    }
    out.push(`(${node.kind}`)
    children.forEach((child, i) => {
      const trailingComma = child.kind === ts.SyntaxKind.CommaToken && i === children.length - 1
      if (!trailingComma) visit(child)
    })
    out.push(')')
  }
  visit(sourceFile)
  return out.join(' ')
}

/** What a version of a file means, for `difference`. */
function meaning (file, text) {
  const sourceFile = parse(file, text)
  return { errors: sourceFile.parseDiagnostics?.length ?? 0, shape: shape(sourceFile), words: commentWords(sourceFile).join(' ') }
}

/** Why two versions of a file differ in meaning, or null when they do not (either may be given as its `meaning`). */
function difference (file, before, after) {
  const a = typeof before === 'string' ? meaning(file, before) : before
  const b = typeof after === 'string' ? meaning(file, after) : after
  if (b.errors > a.errors) return 'syntax errors'
  if (a.shape !== b.shape) return 'syntax tree'
  if (a.words !== b.words) return 'comments'
  return null
}

function lineStarts (text) {
  const starts = [0]
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1)
  return starts
}

const isStatement = node => ts.isStatement(node) && node.kind !== ts.SyntaxKind.Block
const isMember = node => ts.isClassElement(node) || ts.isTypeElement(node)
const isProperty = node => ts.isObjectLiteralElementLike(node) && ts.isObjectLiteralExpression(node.parent)

/** The smallest statement or class/interface member that holds all of [from, to), or null. */
function ownerOf (sourceFile, from, to) {
  let found = null
  const visit = node => {
    if (node.getStart(sourceFile) > from || node.end < to) return
    if (isStatement(node) || isMember(node)) found = node
    node.forEachChild(visit)
  }
  sourceFile.forEachChild(visit)
  return found
}

/** Lines (0-based) of `text` that begin inside a template literal: their leading spaces are the template's. */
function templateLines (file, text) {
  const sourceFile = parse(file, text)
  const starts = lineStarts(text)
  const inside = new Set()
  const visit = node => {
    const k = node.kind
    if (k === ts.SyntaxKind.NoSubstitutionTemplateLiteral || k === ts.SyntaxKind.TemplateHead ||
        k === ts.SyntaxKind.TemplateMiddle || k === ts.SyntaxKind.TemplateTail) {
      const from = node.getStart(sourceFile)
      for (let l = 0; l < starts.length; l++) if (starts[l] > from && starts[l] < node.end) inside.add(l)
    }
    node.forEachChild(visit)
  }
  visit(sourceFile)
  // template heads and tails are not visited by forEachChild: scan their tokens too
  const scan = node => { for (const child of node.getChildren(sourceFile)) { visit(child); scan(child) } }
  scan(sourceFile)
  return inside
}

/**
 * Takes back four habits of prettier the house style does not share and its linter does not
 * fix: a braceless `if`/loop body moved to the next line gets braces (neostandard's `curly`
 * wants them then), an element access `[k]` stays on its object's line (`no-unexpected-multiline`),
 * a one-line type literal separates its members with `,` not `;`, and a generic function keeps
 * its space before `(` (`rejecting<T> (…)`). Edits only inside `within`.
 */
function houseStyle (file, text, within = [0, text.length]) {
  const sourceFile = parse(file, text)
  let edits = []
  const lineIndent = pos => /^[ \t]*/.exec(text.slice(text.lastIndexOf('\n', pos - 1) + 1))[0]
  const brace = (body, before) => {
    if (body == null || body.kind === ts.SyntaxKind.Block) return
    if (!text.slice(body.getFullStart(), body.getStart(sourceFile)).includes('\n')) return
    edits.push([body.getFullStart(), ' {'], [body.end, `\n${lineIndent(before)}}`])
  }
  const visit = node => {
    if (ts.isIfStatement(node)) {
      brace(node.thenStatement, node.getStart(sourceFile))
      if (node.elseStatement != null && !ts.isIfStatement(node.elseStatement)) {
        brace(node.elseStatement, node.elseStatement.getFullStart())
      }
    } else if (ts.isIterationStatement(node, false)) {
      brace(node.statement, node.getStart(sourceFile))
    } else if (ts.isElementAccessExpression(node)) {
      // `a\n[k]` reads as two statements to a person (no-unexpected-multiline): the `[` stays on its object's line
      const gap = text.slice(node.expression.end, node.argumentExpression.getFullStart())
      const bracket = gap.lastIndexOf('[')
      if (gap.slice(0, bracket).includes('\n')) edits.push([node.expression.end, '', bracket - (gap[bracket - 1] === '.' ? 2 : 0)])
    } else if (ts.isTypeLiteralNode(node) && !node.getText(sourceFile).includes('\n')) {
      for (const member of node.members.slice(0, -1)) {
        if (text[member.end - 1] === ';') edits.push([member.end - 1, ',', 1])
      }
    } else if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isFunctionExpression(node) ||
        ts.isConstructorDeclaration(node)) && node.typeParameters != null) {
      const after = node.typeParameters.end
      if (text.slice(after, after + 2) === '>(') edits.push([after + 1, ' '])
    }
    node.forEachChild(visit)
  }
  visit(sourceFile)
  edits.sort((a, b) => b[0] - a[0])
  let out = text
  edits = edits.filter(([at]) => at >= within[0] && at <= within[1])
  for (const [at, insert, remove = 0] of edits) out = out.slice(0, at) + insert + out.slice(at + remove)
  return out
}

class Fitter {
  constructor (prettier, maxLen) {
    this.prettier = prettier
    this.linter = new Linter({ configType: 'flat', cwd: process.cwd() })
    const files = ['**/*.ts', '**/*.mts', '**/*.cts', '**/*.js', '**/*.mjs', '**/*.cjs']
    this.styleConfig = [...neostandard({ ts: true }), { files, rules: { '@stylistic/max-len': maxLen } }]
    this.lengthConfig = [
      ...this.styleConfig
        .filter(c => c.rules == null || c.languageOptions != null || c.plugins != null)
        .map(c => ({ ...c, rules: {} })),
      { files, rules: { '@stylistic/max-len': maxLen } }
    ]
    this.width = maxLen[1]?.code ?? 120
  }

  /** The 0-based lines max-len flags, with their lengths. */
  tooLong (file, text) {
    return this.linter.verify(text, this.lengthConfig, { filename: resolve(file) })
      .filter(m => m.ruleId === '@stylistic/max-len')
      .map(m => ({ line: m.line - 1, length: Number(/length of (\d+)/.exec(m.message)?.[1] ?? 0) }))
  }

  /** The `@stylistic/*` fixes and `curly` (which only adds braces), nothing else: an `eslint --fix` of layout. */
  restyle (file, text) {
    const result = this.linter.verifyAndFix(text, this.styleConfig, {
      filename: resolve(file),
      fix: m => m.ruleId != null && (m.ruleId.startsWith('@stylistic/') || m.ruleId === 'curly')
    })
    return result.output
  }

  /**
   * Prettier's layout for the statement or member `owner`, the parts of it that do not touch
   * [from, to) left as they are: inner statements, members and object properties away from that
   * line stand in as placeholders while prettier formats the rest, then come back verbatim.
   */
  async formatOwner (file, sourceFile, owner, from, to) {
    const text = sourceFile.text
    const start = owner.getStart(sourceFile)
    const held = []
    const edits = []
    const visit = node => {
      const away = node.end <= from || node.getStart(sourceFile) >= to
      if (away && node !== owner) {
        let stand = null
        if (isStatement(node) && node.parent?.kind !== ts.SyntaxKind.LabeledStatement) stand = `__fit${held.length}__;`
        else if (ts.isClassElement(node) && ts.isClassLike(node.parent)) stand = `__fit${held.length}__ () {}`
        else if (isProperty(node)) stand = `__fit${held.length}__`
        if (stand != null) {
          const s = node.getStart(sourceFile)
          held.push(text.slice(s, node.end))
          edits.push([s, node.end, stand])
          return
        }
      }
      node.forEachChild(visit)
    }
    owner.forEachChild(visit)
    let snippet = ''
    let at = start
    for (const [s, e, stand] of edits) { snippet += text.slice(at, s) + stand; at = e }
    snippet += text.slice(at, owner.end)
    const lineStart = text.lastIndexOf('\n', start - 1) + 1
    const indent = text.slice(lineStart, start)
    if (indent.trim() !== '') return null // the owner shares its line with other code
    // a top-level statement is formatted as it stands, any other inside a wrapper that indents it by two
    const wrapper = owner.parent === sourceFile
      ? null
      : ts.isTypeElement(owner) ? 'interface __Fit__ {' : (ts.isClassElement(owner) ? 'class __Fit__ {' : 'async function* __fit__() {')
    const source = wrapper == null ? `${snippet}\n` : `${wrapper}\n${snippet}\n}\n`
    // two columns kept for the spaces neostandard puts where prettier puts none (`function f ()`)
    const printWidth = this.width - 2 - indent.length + (wrapper == null ? 0 : 2)
    if (process.env.FIT_DEBUG != null) process.stderr.write(`--- snippet\n${source}\n`)
    const formatted = houseStyle(
      file,
      await this.prettier.format(source, { ...PRETTIER_OPTIONS, filepath: file, printWidth })
    )
    if (process.env.FIT_DEBUG != null) process.stderr.write(`--- formatted\n${formatted}\n`)
    const lines = formatted.replace(/\n$/, '').split('\n')
    if (wrapper != null && (lines[0] !== wrapper || lines[lines.length - 1] !== '}')) return null
    const inTemplate = templateLines(file, formatted)
    const body = (wrapper == null ? lines.map(line => '  ' + line) : lines.slice(1, -1)).map((line, i) => {
      if (inTemplate.has(wrapper == null ? i : i + 1)) return line.slice(wrapper == null ? 2 : 0)
      if (line === '') return line
      if (!line.startsWith('  ')) return null
      return indent + line.slice(2)
    })
    if (body.some(l => l == null)) return null
    let result = body.join('\n').slice(indent.length)
    for (let i = held.length - 1; i >= 0; i--) {
      const pattern = new RegExp(`__fit${i}__(?: ?\\(\\) \\{\\})?`)
      if (!pattern.test(result)) return null
      result = result.replace(pattern, () => held[i])
    }
    return { start, end: owner.end, text: result }
  }

  /** Formats the statement holding each flagged code line with prettier, last line first. */
  async fitCode (file, text, notes) {
    const flagged = this.tooLong(file, text).map(f => f.line)
    if (flagged.length === 0) return text
    const comments = commentRanges(parse(file, text))
    const starts = lineStarts(text)
    const inComment = pos => comments.some(r => r.pos <= pos && pos < r.end)
    let current = text
    let currentMeaning = meaning(file, text)
    let below = Infinity // lines at and after this one were reformatted already (the numbering above it holds)
    for (const line of flagged.sort((x, y) => y - x)) {
      if (line >= below) continue
      const lineText = text.slice(starts[line], (starts[line + 1] ?? text.length + 1) - 1)
      const from = starts[line] + lineText.search(/\S/)
      if (inComment(from)) continue // a comment line: wrap-comments' business
      const to = starts[line] + lineText.trimEnd().length
      const sourceFile = parse(file, current)
      const owner = ownerOf(sourceFile, from, to)
      let formatted = null
      try {
        if (owner != null) {
          const part = await this.formatOwner(file, sourceFile, owner, from, to)
          if (part != null) formatted = current.slice(0, part.start) + part.text + current.slice(part.end)
        }
        if (formatted == null) {
          const ranged = await this.prettier.format(current,
            { ...PRETTIER_OPTIONS, printWidth: this.width - 2, filepath: file, rangeStart: from, rangeEnd: to })
          // the house style is put back only where prettier wrote
          let same = 0
          while (same < ranged.length && ranged[same] === current[same]) same++
          let sameEnd = 0
          while (
            sameEnd < ranged.length - same &&
            ranged[ranged.length - 1 - sameEnd] === current[current.length - 1 - sameEnd]
          ) {
            sameEnd++
          }
          formatted = houseStyle(file, ranged, [same, ranged.length - sameEnd])
        }
      } catch (err) {
        notes.push(`${file}:${line + 1}: prettier failed (${err.message.split('\n')[0]})`)
        continue
      }
      if (formatted === current) continue
      // the lines prettier rewrote: from the first that differs to the last that differs
      const oldLines = current.split('\n')
      const newLines = formatted.split('\n')
      let top = 0
      while (top < oldLines.length && oldLines[top] === newLines[top]) top++
      let tail = 0
      while (
        tail < oldLines.length - top &&
        oldLines[oldLines.length - 1 - tail] === newLines[newLines.length - 1 - tail]
      ) {
        tail++
      }
      const lastOld = oldLines.length - 1 - tail
      if (top > line || lastOld < line) {
        notes.push(`${file}:${line + 1}: left as it was (prettier changed lines ${top + 1}–${lastOld + 1}, not this one)`)
        continue
      }
      const directiveAbove = top > 0 && DIRECTIVE.test(oldLines[top - 1])
      const directiveInside = oldLines.slice(top, lastOld + 1).some(l => DIRECTIVE.test(l))
      if (directiveAbove || directiveInside) {
        notes.push(`${file}:${line + 1}: left as it was (a lint or compiler directive applies to these lines)`)
        below = top
        continue
      }
      const formattedMeaning = meaning(file, formatted)
      const why = difference(file, currentMeaning, formattedMeaning)
      if (why != null) {
        notes.push(`${file}:${line + 1}: left as it was (prettier's version would change the ${why})`)
        continue
      }
      current = formatted
      currentMeaning = formattedMeaning
      below = top
    }
    return current
  }

  async fit (file, text, notes) {
    const wrapped = wrapText(file, text, { width: this.width, target: 100, trailing: true }).text
    let out = difference(file, text, wrapped) == null ? wrapped : text
    if (out === text && wrapped !== text) notes.push(`${file}: comments left as they were (re-wrapping would change their words)`)
    const code = await this.fitCode(file, out, notes)
    if (code !== out) {
      const styled = this.restyle(file, code)
      const why = difference(file, out, styled)
      if (why == null) out = styled
      else notes.push(`${file}: code left as it was (the restyled version would change the ${why})`)
    }
    return out
  }
}

async function main () {
  const options = parseArgs(process.argv.slice(2))
  if (options.paths.length === 0) {
    process.stderr.write('usage: node scripts/fit-columns.mjs [--write] [--prettier DIR] [--quiet] FILE|DIR…\n')
    process.exit(2)
  }
  const started = Date.now()
  const fitter = new Fitter(await loadPrettier(options.prettier), await maxLenRule())
  const totals = { files: 0, changed: 0, before: 0, after: 0 }
  const notes = []
  const left = []
  for (const file of options.paths.flatMap(listFiles)) {
    const text = readFileSync(file, 'utf8')
    totals.files++
    // max-len flags no line that is not longer than the limit (tabs aside): most files need no linting
    const before = text.split('\n').some(l => l.length > fitter.width || l.includes('\t')) ? fitter.tooLong(file, text) : []
    totals.before += before.length
    const out = before.length === 0 ? text : await fitter.fit(file, text, notes)
    const after = out === text ? before : fitter.tooLong(file, out)
    totals.after += after.length
    for (const f of after) left.push(`${file}:${f.line + 1}: ${f.length} columns`)
    if (out === text) continue
    totals.changed++
    if (options.write) writeFileSync(file, out)
  }
  if (!options.quiet) {
    for (const note of notes) process.stderr.write(`${note}\n`)
    for (const line of left) process.stdout.write(`${line}\n`)
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  process.stdout.write(`${options.write ? 'rewrote' : 'would rewrite'} ${totals.changed} of ${totals.files} files; ` +
    `lines max-len flags: ${totals.before} → ${totals.after}; ${notes.length} notes; ${seconds} s\n`)
}

export { shape, meaning, difference, houseStyle }

// run as a script, not when imported (a check may import `difference`)
if (process.argv[1] != null && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main()
