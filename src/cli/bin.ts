#!/usr/bin/env node
// libp2p's dependencies need Node 22 (Promise.withResolvers): say so instead of crashing later.
const major = Number(process.versions.node.split('.')[0])
if (major < 22) {
  process.stderr.write(`error: idlegrid needs Node.js >= 22 (this is ${process.version}); run it through npm (npm run …, npx …), which uses the Node 22 installed with the project\n`)
  process.exit(1)
}
const { main } = await import('./main.js')
process.exitCode = await main(process.argv.slice(2))
