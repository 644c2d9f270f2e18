/**
 * GPU model keys. Every GPU gets a normalised `modelKey` so that renters' filters
 * (`--gpu H100`) match providers' records whatever the driver calls the card.
 */

/** Vendor/brand words that carry no identity. */
const DROP_WORDS = new Set(['nvidia', 'geforce', 'tesla', 'generation'])
/** Form-factor and memory-technology words: the same chip in another package is the same model. */
const FORM_FACTOR = /^(sxm\d*|pcie|hbm\d*e?|gddr\d*x?)$/

/**
 * Normalises a GPU name to a model key.
 *
 * Rule: lowercase; split on spaces, dashes, underscores and slashes; drop the brand words
 * `nvidia`, `geforce`, `tesla`, `generation`; drop form-factor / memory-technology words
 * (`sxm`, `sxm4`, `pcie`, `hbm3`, `hbm2e`, `gddr6x` …); keep everything else in order
 * (including a memory size such as `80gb`, written as `<n>gb`), joined with `-`.
 *
 *   "NVIDIA H100 80GB HBM3" → "h100-80gb"      "NVIDIA A100-SXM4-40GB" → "a100-40gb"
 *   "NVIDIA GeForce RTX 4090" → "rtx-4090"     "Tesla T4" → "t4"     "NVIDIA L4" → "l4"
 *   "NVIDIA RTX 6000 Ada Generation" → "rtx-6000-ada"   "NVIDIA H100 PCIe" → "h100"
 *
 * Only the name is used: a card whose name carries no memory size gets no `-<n>gb` suffix
 * (the VRAM is a separate field of the record).
 */
export function normaliseGpuModel (name: string): string {
  const words = name.toLowerCase()
    .replace(/(\d+)\s*gb\b/g, '$1gb')
    .split(/[\s\-_/]+/)
    .filter(w => w !== '' && !DROP_WORDS.has(w) && !FORM_FACTOR.test(w))
  return words.join('-')
}

/** Splits a key into tokens at dashes and at letter/digit boundaries: "rtx4090" → rtx,4090. */
function matchTokens (key: string): string[] {
  return key.split('-')
    .flatMap(part => part.match(/[a-z]+|[0-9]+(?:\.[0-9]+)?/g) ?? [])
}

/**
 * The match tokens of a model name or filter, after normalising: "H100 80GB" → h,100,80,gb.
 * `gpuModelMatches(f, k)` is true exactly when the tokens of `f` are a leading run of those
 * of `k`, so discovery indexes every leading run (see capability/discovery/index-keys.ts).
 */
export function gpuModelTokens (name: string): string[] {
  return matchTokens(normaliseGpuModel(name))
}

/**
 * Whether a renter's model filter matches a record's model key. Both are normalised, so
 * the comparison ignores case, spaces, dashes and brand words, and "RTX4090" ≈ "rtx-4090".
 * A filter matches the key when its tokens are a leading run of the key's tokens:
 * "h100" matches "h100-80gb" and "h100-94gb"; "a100-40gb" matches only "a100-40gb";
 * "l4" does not match "l40s".
 */
export function gpuModelMatches (filter: string, modelKey: string): boolean {
  const f = tokensOf(filter)
  const k = tokensOf(modelKey)
  if (f.length === 0 || f.length > k.length) return false
  return f.every((t, i) => t === k[i])
}

// a provider matches the same few filters and its own model key for every job it sees: the
// tokens of recent names are kept (a bounded table, emptied when full: names come from the wire)
const TOKEN_CACHE_MAX = 1024
const tokenCache = new Map<string, string[]>()

function tokensOf (name: string): string[] {
  let tokens = tokenCache.get(name)
  if (tokens == null) {
    tokens = matchTokens(normaliseGpuModel(name))
    if (tokenCache.size >= TOKEN_CACHE_MAX) tokenCache.clear()
    tokenCache.set(name, tokens)
  }
  return tokens
}
