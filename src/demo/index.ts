/** `idlegrid demo`: the whole market on this machine, as processes on 127.0.0.1. */
export { runDemo } from './scenario.js'
export { DEFAULT_DEMO_IMAGE, demoImage } from './docker-jobs.js'
