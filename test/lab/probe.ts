/**
 * A small TCP and NAT-PMP probe the lab specs run inside a lab host (`node probe.js …`):
 *
 *   serve PORT                  answers each connection with the address it came from ("ip:port")
 *                               and prints "up" once listening
 *   connect HOST PORT [LOCAL]   connects (from local port LOCAL if given), prints what the server
 *                               said; exit 1 if nothing answered within 3 s
 *   punch HOST PORT LOCAL       the same, trying again every 200 ms for 6 s (a simultaneous open
 *                               with a peer doing the same towards us), prints "connected"
 *   natpmp GATEWAY PORT         asks the gateway (NAT-PMP, RFC 6886) to map TCP PORT for 120 s,
 *                               prints the public port it got
 */
import { createSocket } from 'node:dgram'
import { connect, createServer } from 'node:net'

const [mode, a, b, c] = process.argv.slice(2)

function fail (why: string): never {
  process.stderr.write(`${why}\n`)
  process.exit(1)
}

/** One connection attempt; resolves with what the server sent, or rejects. */
async function attempt (host: string, port: number, localPort?: number, timeoutMs = 3_000): Promise<string> {
  return await new Promise((resolve, reject) => {
    const socket = connect({ host, port, localPort })
    let got = ''
    const timer = setTimeout(() => { socket.destroy(); reject(new Error('timed out')) }, timeoutMs)
    socket.on('data', (d) => { got += d.toString() })
    socket.on('end', () => { clearTimeout(timer); resolve(got) })
    socket.on('connect', () => { if (mode === 'punch') { clearTimeout(timer); socket.end(); resolve('connected') } })
    socket.on('error', (err) => { clearTimeout(timer); reject(err) })
  })
}

if (mode === 'serve') {
  createServer(s => { s.end(`${s.remoteAddress ?? '?'}:${s.remotePort ?? '?'}`) }).listen(Number(a), '0.0.0.0', () => { process.stdout.write('up\n') })
} else if (mode === 'connect') {
  attempt(a, Number(b), c == null ? undefined : Number(c)).then(out => { process.stdout.write(`${out}\n`) }, (err: Error) => { fail(err.message) })
} else if (mode === 'punch') {
  const until = Date.now() + 6_000
  const tryOnce = (): void => {
    attempt(a, Number(b), Number(c), 1_000).then(out => { process.stdout.write(`${out}\n`) }, (err: Error) => {
      if (Date.now() > until) fail(err.message)
      setTimeout(tryOnce, 200)
    })
  }
  tryOnce()
} else if (mode === 'natpmp') {
  const socket = createSocket('udp4')
  const request = Buffer.alloc(12)
  request.writeUInt8(0, 0) // version
  request.writeUInt8(2, 1) // map TCP
  request.writeUInt16BE(Number(b), 4) // internal port
  request.writeUInt16BE(Number(b), 6) // suggested public port
  request.writeUInt32BE(120, 8) // lifetime, s
  const timer = setTimeout(() => { fail('no NAT-PMP answer within 3 s') }, 3_000)
  socket.on('message', (msg) => {
    clearTimeout(timer)
    if (msg.length < 16 || msg.readUInt8(1) !== 130) fail(`not a TCP mapping answer: ${msg.toString('hex')}`)
    const result = msg.readUInt16BE(2)
    if (result !== 0) fail(`NAT-PMP result code ${result}`)
    process.stdout.write(`${msg.readUInt16BE(10)}\n`)
    socket.close()
  })
  socket.send(request, 5351, a)
} else {
  fail('usage: probe serve PORT | connect HOST PORT [LOCAL] | punch HOST PORT LOCAL | natpmp GATEWAY PORT')
}
