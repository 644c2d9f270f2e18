/**
 * A node from a config: which services each role runs on top of the core node (src/node).
 * The composition root of capability, market, exec, ledger, submit and serve, shared by the
 * role commands (src/cli) and the doctor's network check (src/doctor).
 */
export { buildNode, roleExtensions } from './build-node.js'
export type { BuildOptions } from './build-node.js'
