export { runDemo, DEMO_JOB_DIR } from './scenario.js'
export type { DemoOptions, DemoSummary, JobReport, AttemptReport } from './scenario.js'
export { demoFleet, providerArgs } from './fleet.js'
export type { DemoProvider } from './fleet.js'
