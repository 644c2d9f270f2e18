// A real inference service for idlegrid's service leases (issue 17): sentiment of English
// text with wink-nlp and its lite English model, both shipped to the replica as files (no
// weights fetched at run time). Listens on 127.0.0.1:$PORT (the provider picks the port).
//
//   GET  /health                  200 once the model is loaded
//   GET  /sentiment?text=...      {"sentiment": -1..1, "tokens": n}
//   POST /sentiment  {"text": ...} the same
//   GET  /stream?text=...         server-sent events: one event per sentence, then "done"
//
// SLOW_MS (optional) delays every answer, for routing tests and benchmarks.
import { createServer } from 'node:http'
import winkNLP from 'wink-nlp'
import model from 'wink-eng-lite-web-model'

const nlp = winkNLP(model)
const its = nlp.its
const port = Number(process.env.PORT ?? 8080)
const slowMs = Number(process.env.SLOW_MS ?? 0)
const MAX_TEXT = 64 * 1024

function analyse (text) {
  const doc = nlp.readDoc(text)
  return { sentiment: doc.out(its.sentiment), tokens: doc.tokens().length(), sentences: doc.sentences().out() }
}

function send (res, status, body) {
  const text = JSON.stringify(body) + '\n'
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

async function readText (req, url) {
  if (req.method === 'GET') return url.searchParams.get('text') ?? ''
  let size = 0
  const chunks = []
  for await (const chunk of req) {
    size += chunk.length
    if (size > MAX_TEXT) throw Object.assign(new Error('text too long'), { status: 413 })
    chunks.push(chunk)
  }
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}')
  return typeof body.text === 'string' ? body.text : ''
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost')
  try {
    // the pid lets the demo stop one replica the hard way
    if (url.pathname === '/health') return send(res, 200, { ok: true, pid: process.pid })
    if (slowMs > 0) await new Promise(resolve => setTimeout(resolve, slowMs))
    if (url.pathname === '/sentiment') {
      const text = await readText(req, url)
      if (text.length > MAX_TEXT) return send(res, 413, { error: 'text too long' })
      const { sentiment, tokens } = analyse(text)
      return send(res, 200, { sentiment, tokens, replica: process.env.IDLEGRID_JOB_ID?.slice(0, 8) })
    }
    if (url.pathname === '/stream') {
      const { sentences } = analyse(await readText(req, url))
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      for (const sentence of sentences) {
        res.write(`data: ${JSON.stringify({ sentence, sentiment: nlp.readDoc(sentence).out(its.sentiment) })}\n\n`)
        await new Promise(resolve => setTimeout(resolve, 5))
      }
      res.end('event: done\ndata: {}\n\n')
      return
    }
    send(res, 404, { error: 'no such path' })
  } catch (err) {
    send(res, err.status ?? 400, { error: String(err.message ?? err) })
  }
})
server.listen(port, '127.0.0.1', () => { console.log(`sentiment service on 127.0.0.1:${port}`) })
process.on('SIGTERM', () => { server.close(() => process.exit(0)); setTimeout(() => process.exit(0), 2000).unref() })
