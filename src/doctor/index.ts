/**
 * `idlegrid doctor`'s checks: this machine (Node, GPUs, Docker, data dir, disk, ports) and the
 * network (bootstrap peers, clock).
 */
export { runDoctor } from './doctor.js'
export type { CheckResult } from './check.js'
