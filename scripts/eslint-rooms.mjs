// ESLint rule `rooms/through-the-door`: a file under src/<room>/ imports another room of src/
// only through that room's index.ts (its face), never a file inside it. Within a room, and for
// protocols/ (the wire formats, one generated codec per message file), any path is fine.
import { dirname, relative, resolve, sep } from 'node:path'

const SRC = resolve(import.meta.dirname, '..', 'src')

/** The room (first folder under src/) of an absolute path, or undefined outside src/. */
function roomOf (path) {
  const rel = relative(SRC, path)
  if (rel.startsWith('..') || rel === '') return undefined
  const parts = rel.split(sep)
  return parts.length > 1 ? parts[0] : undefined
}

const throughTheDoor = {
  meta: {
    type: 'suggestion',
    docs: { description: 'import another room of src/ only through its index.ts' },
    schema: [],
    messages: {
      inside: "'{{source}}' reaches inside room '{{room}}': import it from '{{door}}' (export what you need there)"
    }
  },
  create (context) {
    const file = context.filename
    const own = roomOf(file)
    if (own == null) return {}
    const check = (node) => {
      const source = node.source?.value
      if (typeof source !== 'string' || !source.startsWith('.')) return
      const target = resolve(dirname(file), source)
      const room = roomOf(target)
      if (room == null || room === own) return
      const door = resolve(SRC, room, 'index.js')
      if (target === door) return
      const suggested = relative(dirname(file), door).split(sep).join('/')
      context.report({ node: node.source, messageId: 'inside', data: { source, room, door: suggested.startsWith('.') ? suggested : `./${suggested}` } })
    }
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check
    }
  }
}

export default { rules: { 'through-the-door': throughTheDoor } }
