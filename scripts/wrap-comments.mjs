#!/usr/bin/env node
/**
 * Re-wraps comment lines longer than --width columns (120) in TypeScript and JavaScript files, without
 * touching code (issue 42: 120 columns, enforced by `@stylistic/max-len` later).
 *
 *   node scripts/wrap-comments.mjs [--write] [--trailing] [--width 120] [--target 100] FILE|DIR…
 *
 * Without --write it only reports what it would change. What it rewrites:
 * - a `//` comment line, or a line inside a `/** … *\/` block: from that line to the end of its
 *   paragraph, the words are filled again to --target columns (earlier lines stay as they are);
 *   a paragraph ends at an empty comment line, a list item (`- `, `1. `), a JSDoc tag (`@`), a
 *   change of indentation or the end of the comment;
 * - a one-line `/** … *\/` on a line of its own becomes a block of several lines;
 * - with --trailing, a `//` comment after code moves to its own line above that code, when the
 *   code alone then fits.
 * What it leaves: lint and compiler directives (`eslint-…`, `@ts-…`), fenced code and tables in
 * comments, indented examples, and words longer than a line (URLs).
 *
 * Comments are found with TypeScript's own parser, never by pattern, so `//` inside strings,
 * templates and regular expressions is not a comment. Before a file is written, both versions
 * are parsed again: their code tokens must be identical and their comments must hold the same
 * words in the same order, or the file is left alone and the script says so.
 */
import { readFileSync, writeFileSync, statSync, readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import ts from 'typescript'

const DIRECTIVE = /eslint-|@ts-|prettier-ignore|istanbul |c8 |<reference /
const LIST_MARKER = /^(?:[-*+] |\d+[.)] )/
/** The files a folder is searched for: TypeScript and JavaScript modules. */
const SOURCE = /\.(?:ts|mts|cts|js|mjs|cjs)$/

/** JSDoc nodes are comments the parser attaches to declarations: neither code nor a place to look for comments. */
const isJSDoc = node => node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode

function parseArgs (argv) {
  const options = { write: false, trailing: false, width: 120, target: 100, paths: [] }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--write') options.write = true
    else if (arg === '--trailing') options.trailing = true
    else if (arg === '--width') options.width = Number(argv[++i])
    else if (arg === '--target') options.target = Number(argv[++i])
    else if (arg.startsWith('--')) throw new Error(`unknown option ${arg}`)
    else options.paths.push(arg)
  }
  if (!(options.target > 20 && options.target <= options.width)) throw new Error('--target must be in (20, --width]')
  return options
}

function listFiles (path) {
  if (statSync(path).isFile()) return [path]
  return readdirSync(path, { withFileTypes: true }).flatMap(entry => {
    if (entry.name === 'node_modules' || entry.name === 'dist') return []
    const full = join(path, entry.name)
    if (entry.isDirectory()) return listFiles(full)
    return SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : []
  })
}

/** Every comment of a file as [pos, end, kind], from the parser's view of the trivia around each token. */
function commentRanges (sourceFile) {
  const text = sourceFile.text
  const byPos = new Map()
  const add = ranges => { for (const r of ranges ?? []) byPos.set(r.pos, r) }
  const visit = node => {
    if (isJSDoc(node)) return
    add(ts.getLeadingCommentRanges(text, node.pos))
    add(ts.getTrailingCommentRanges(text, node.end))
    for (const child of node.getChildren(sourceFile)) visit(child)
  }
  visit(sourceFile)
  return [...byPos.values()].sort((a, b) => a.pos - b.pos)
}

/** The code tokens of a file (kind and text), comments and whitespace left out. */
function codeTokens (sourceFile) {
  const tokens = []
  const visit = node => {
    if (isJSDoc(node)) return
    const children = node.getChildren(sourceFile)
    if (children.length === 0) tokens.push(`${node.kind}:${node.getText(sourceFile)}`)
    for (const child of children) visit(child)
  }
  visit(sourceFile)
  return tokens
}

function commentWords (sourceFile) {
  return commentRanges(sourceFile)
    .map(r => sourceFile.text.slice(r.pos, r.end).replace(/^\/\*\*?|\*\/$|^\/\//g, '').replace(/^\s*\*(?!\/)/gm, '').replace(/^\s*\/\//gm, ''))
    .join(' ').split(/\s+/).filter(w => w !== '')
}

function parse (file, text) {
  const kind = /\.[cm]?js$/.test(file) ? ts.ScriptKind.JS : (file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS)
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind)
}

/**
 * Fills words into lines: the first starts with `first`, the others with `rest`, each at most
 * `target` columns when it can be.
 */
function fill (words, first, rest, target) {
  const lines = []
  let line = first
  let empty = true
  for (const word of words) {
    if (!empty && line.length + 1 + word.length > target) {
      lines.push(line.trimEnd())
      line = rest + word
    } else {
      line = empty ? line + word : line + ' ' + word
    }
    empty = false
  }
  lines.push(line.trimEnd())
  return lines
}

/** Splits prose into words, keeping a double space after a full stop where the author put one. */
const wordsOf = body => body.trim().split(/ (?=\S)/)

/**
 * What kind of comment line each line of the file is: 'line' (a `//` comment alone on its line),
 * 'inner' (inside a block comment, neither its first nor its last line), 'block1' (a one-line
 * block comment alone on its line), 'trailing' (a `//` comment after code), or nothing.
 */
function classifyLines (text, ranges) {
  const lineStarts = [0]
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1)
  const lineOf = pos => {
    let lo = 0
    let hi = lineStarts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (lineStarts[mid] <= pos) lo = mid
      else hi = mid - 1
    }
    return lo
  }
  const kinds = new Array(lineStarts.length).fill(null)
  const fenced = new Array(lineStarts.length).fill(false)
  for (const r of ranges) {
    const startLine = lineOf(r.pos)
    const endLine = lineOf(r.end - 1)
    const before = text.slice(lineStarts[startLine], r.pos)
    const lineEnd = text.indexOf('\n', r.pos)
    const after = text.slice(r.end, lineEnd === -1 ? text.length : lineEnd)
    const comment = text.slice(r.pos, r.end)
    if (DIRECTIVE.test(comment)) continue
    if (r.kind === ts.SyntaxKind.SingleLineCommentTrivia) {
      if (comment.startsWith('///')) continue
      kinds[startLine] = before.trim() === '' ? 'line' : (after.trim() === '' ? 'trailing' : null)
    } else if (startLine === endLine) {
      if (before.trim() === '' && after.trim() === '' && comment.startsWith('/**')) kinds[startLine] = 'block1'
    } else {
      let inFence = false
      for (let line = startLine + 1; line < endLine; line++) {
        const content = text.slice(lineStarts[line], lineStarts[line + 1] - 1)
        if (/^\s*\*?\s*```/.test(content)) { inFence = !inFence; fenced[line] = true; continue }
        fenced[line] = inFence
        kinds[line] = 'inner'
      }
    }
  }
  return kinds.map((kind, i) => (fenced[i] ? null : kind))
}

const PREFIX = { line: /^(\s*\/\/)( +)(.*)$/, inner: /^(\s*\*)( +)(.*)$/ }

/** A comment line's prefix (indent, marker and the spaces after it) and its text. */
function split (line, kind) {
  const m = PREFIX[kind].exec(line)
  return m == null ? null : { prefix: m[1] + m[2], spaces: m[2].length, body: m[3] }
}

function isProse (body) {
  return body !== '' && !body.startsWith('|') && !body.startsWith('@') && !DIRECTIVE.test(body)
}

/**
 * Whether a line whose text is indented past one space continues a list item above it (its
 * spaces are the marker's width); otherwise it is an indented example and left alone.
 */
function continuesListItem (lines, kinds, index, kind, parts) {
  for (let i = index - 1; i >= 0 && kinds[i] === kind; i--) {
    const above = split(lines[i], kind)
    if (above == null) return false
    if (above.spaces === parts.spaces) continue
    if (above.spaces !== 1) return false
    const marker = LIST_MARKER.exec(above.body)
    return marker != null && 1 + marker[0].length === parts.spaces
  }
  return false
}

function wrapText (file, text, options) {
  const sourceFile = parse(file, text)
  const ranges = commentRanges(sourceFile)
  const kinds = classifyLines(text, ranges)
  const lines = text.split('\n')
  const out = []
  let fixed = 0
  let i = 0
  while (i < lines.length) {
    const line = lines[i]
    const kind = kinds[i]
    if (line.length <= options.width || kind == null) { out.push(line); i++; continue }

    if (kind === 'line' || kind === 'inner') {
      const parts = split(line, kind)
      const indented = parts != null && parts.spaces > 1 && !continuesListItem(lines, kinds, i, kind, parts)
      if (parts == null || !isProse(parts.body) || indented) { out.push(line); i++; continue }
      const marker = parts.spaces === 1 ? LIST_MARKER.exec(parts.body) : null
      const rest = marker == null ? parts.prefix : parts.prefix + ' '.repeat(marker[0].length)
      let words = wordsOf(parts.body)
      let j = i + 1
      while (j < lines.length && kinds[j] === kind) {
        const next = split(lines[j], kind)
        if (next == null || next.prefix !== rest || !isProse(next.body) || LIST_MARKER.test(next.body)) break
        words = words.concat(wordsOf(next.body))
        j++
      }
      const filled = fill(words, parts.prefix, rest, options.target)
      out.push(...filled)
      fixed +=
        lines.slice(i, j).filter(l => l.length > options.width).length -
        filled.filter(l => l.length > options.width).length
      i = j
      continue
    }

    if (kind === 'block1') {
      const m = /^(\s*)\/\*\*\s*(.*?)\s*\*\/\s*$/.exec(line)
      if (m == null || !isProse(m[2])) { out.push(line); i++; continue }
      const filled = fill(wordsOf(m[2]), `${m[1]} * `, `${m[1]} * `, options.target)
      out.push(`${m[1]}/**`, ...filled, `${m[1]} */`)
      if (filled.every(l => l.length <= options.width)) fixed++
      i++
      continue
    }

    // a trailing `//` comment: moved above its code when the code alone then fits
    const at = commentStartOnLine(sourceFile, text, ranges, i)
    const code = at == null ? '' : line.slice(0, at).trimEnd()
    if (!options.trailing || at == null || code.length > options.width) { out.push(line); i++; continue }
    const indent = /^\s*/.exec(line)[0]
    const body = line.slice(at).replace(/^\/\/\s*/, '')
    out.push(...fill(wordsOf(body), `${indent}// `, `${indent}// `, options.target), code)
    fixed++
    i++
  }
  return { text: out.join('\n'), fixed }
}

function commentStartOnLine (sourceFile, text, ranges, lineIndex) {
  const start = sourceFile.getPositionOfLineAndCharacter(lineIndex, 0)
  const end = text.indexOf('\n', start)
  const onLine = ranges.filter(r => r.pos >= start && r.end <= (end === -1 ? text.length : end))
  const last = onLine[onLine.length - 1]
  return last != null && last.kind === ts.SyntaxKind.SingleLineCommentTrivia ? last.pos - start : null
}

function overLong (text, width) {
  return text.split('\n').filter(l => l.length > width).length
}

function main () {
  const options = parseArgs(process.argv.slice(2))
  if (options.paths.length === 0) {
    process.stderr.write('usage: node scripts/wrap-comments.mjs [--write] [--trailing] [--width 120] [--target 100] FILE|DIR…\n')
    process.exit(2)
  }
  const totals = { files: 0, changed: 0, before: 0, after: 0, fixed: 0, refused: 0 }
  for (const file of options.paths.flatMap(listFiles)) {
    const text = readFileSync(file, 'utf8')
    const { text: wrapped, fixed } = wrapText(file, text, options)
    totals.files++
    totals.before += overLong(text, options.width)
    if (wrapped === text) { totals.after += overLong(text, options.width); continue }
    const a = parse(file, text)
    const b = parse(file, wrapped)
    const sameCode = codeTokens(a).join('\n') === codeTokens(b).join('\n')
    const sameWords = commentWords(a).join(' ') === commentWords(b).join(' ')
    if (!sameCode || !sameWords) {
      totals.refused++
      totals.after += overLong(text, options.width)
      process.stderr.write(`${file}: left alone (${sameCode ? 'comment words' : 'code tokens'} would differ)\n`)
      continue
    }
    totals.changed++
    totals.fixed += fixed
    totals.after += overLong(wrapped, options.width)
    if (options.write) writeFileSync(file, wrapped)
  }
  process.stdout.write(`${options.write ? 'rewrote' : 'would rewrite'} ${totals.changed} of ${totals.files} files; lines over ${options.width} columns: ${totals.before} → ${totals.after} (${totals.fixed} comment lines fixed)${totals.refused > 0 ? `; ${totals.refused} files left alone` : ''}\n`)
}

export { listFiles, commentRanges, codeTokens, commentWords, parse, wrapText, overLong, isJSDoc }

// run as a script (not when scripts/fit-columns.mjs imports it)
if (process.argv[1] != null && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main()
