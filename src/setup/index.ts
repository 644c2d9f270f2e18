/** `idlegrid init`: a provider's proposed policy from its GPUs, and the commented config file it is written to. */
export { proposeProvider, priceFloorFor, regionFor } from './proposal.js'
export { configText } from './config-text.js'
