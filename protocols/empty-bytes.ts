/**
 * The one empty byte array every generated decoder starts an absent bytes field with
 * (scripts/protons-empty-bytes.mjs): it has no element to write, so it is shared.
 */
export const EMPTY_BYTES = new Uint8Array(0)
