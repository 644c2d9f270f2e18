/**
 * The one entry for test helpers: bounded waits and temporary directories, another local
 * user to test permissions against, and the two ways to run a network on 127.0.0.1 (separate
 * `idlegrid` processes, or real nodes in this process) with one shape, one set of options and
 * one mesh wait.
 */
export { processAlive, tempDir, waitFor } from './wait.js'
export { componentsOf, connectionManagerOf } from './components.js'
export type { NodeComponents } from './components.js'
export { otherUser, runAs } from './users.js'
export type { OtherUser } from './users.js'
export {
  BIN_PATH, DEFAULT_PROVIDER_ARGS, spawnNode, startLocalNetwork, inspectMesh, waitForMesh,
  startInProcessNetwork, waitForTopicMesh, UNLIMITED_GOSSIP_RATES
} from './network.js'
export type {
  LocalNetwork,
  LocalNetworkOptions,
  NodeProcess,
  SpawnOptions,
  MeshNode,
  MeshView,
  MeshCriteria,
  LinkFilter,
  NetworkNodes,
  NetworkShape,
  InProcessNetwork,
  InProcessOptions
} from './network.js'
export { recordAttack } from './redteam.js'
export type { AttackRow } from './redteam.js'
export { recordFault, chaosFull } from './chaos.js'
export type { FaultRow } from './chaos.js'
