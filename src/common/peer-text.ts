/** A peer id (or any long id) shortened for people: first 8 and last 6 characters. */
export function shortPeerId (id: string): string {
  return id.length > 16 ? `${id.slice(0, 8)}…${id.slice(-6)}` : id
}
