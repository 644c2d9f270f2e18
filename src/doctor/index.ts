/** `idlegrid doctor`'s checks: this machine (Node, GPUs, Docker, data dir, disk, ports) and the network (bootstrap peers, clock). */
export { runDoctor } from './doctor.js'
export type { DoctorOptions } from './doctor.js'
export type { CheckResult, CheckStatus } from './check.js'
