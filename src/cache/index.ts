/**
 * The provider's input cache (issue 39): job inputs kept by digest, private to the renters who
 * sent them unless marked public, bounded, checked before each use. See input-cache.ts.
 */
export { InputCache, type Holding, type InputCacheStats } from './input-cache.js'
