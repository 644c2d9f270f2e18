/**
 * The market simulator (`idlegrid sim`): the node's own market code driven in virtual time
 * over a real GPU-cluster trace or a synthetic resample of it, against the old way.
 * Inside: model/ (the trace, population, providers, network, data), engine/ (the event loop
 * and the auction round) and report/ (metrics, summary, claims, markdown and figures).
 */
export { loadScenario, parseScenario } from './scenario.js'
export type { Scenario } from './scenario.js'
export { runScenario } from './run.js'
export { writeReport, markdownReport, mainTable, dataTable } from './report/markdown.js'
export { progressBar } from './progress.js'
export { SimError } from './errors.js'
