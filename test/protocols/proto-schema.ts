/**
 * The .proto files as protobufjs reads them, for tests that derive their cases from the
 * schema itself (so a new field is covered without editing the test). protons' options
 * (`[(protons.options).limit = N]`) are stripped first: protobufjs need not know them.
 */

import { readdirSync, readFileSync } from 'node:fs'
import protobuf from 'protobufjs'

export const PROTO_DIR = new URL('../../../protocols/', import.meta.url)

/** every .proto file of protocols/, by file name */
export function loadProtoFiles (): Map<string, protobuf.Root> {
  const roots = new Map<string, protobuf.Root>()
  for (const file of readdirSync(PROTO_DIR).filter(f => f.endsWith('.proto')).sort()) {
    const text = readFileSync(new URL(file, PROTO_DIR), 'utf8')
      .replace(/\s*\[\s*\(protons\.options\)[^\]]*\]/g, '')
      .replace(/^\s*import\s+"protons[^"]*";\s*$/gm, '')
    const root = protobuf.parse(text, { keepCase: true }).root
    root.resolveAll()
    roots.set(file, root)
  }
  return roots
}

/** every message type in `ns`, nested ones included */
export function allTypes (ns: protobuf.NamespaceBase): protobuf.Type[] {
  const out: protobuf.Type[] = []
  for (const nested of ns.nestedArray) {
    if (nested instanceof protobuf.Type) out.push(nested)
    if (nested instanceof protobuf.Namespace || nested instanceof protobuf.Type) out.push(...allTypes(nested))
  }
  return out
}

/** wire element of a packable scalar/enum type, undefined for strings, bytes and messages */
export function packableElement (field: protobuf.Field): 'varint' | 'fixed32' | 'fixed64' | undefined {
  if (field.resolvedType instanceof protobuf.Enum) return 'varint'
  if (['int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'bool'].includes(field.type)) return 'varint'
  if (['fixed32', 'sfixed32', 'float'].includes(field.type)) return 'fixed32'
  if (['fixed64', 'sfixed64', 'double'].includes(field.type)) return 'fixed64'
  return undefined
}
