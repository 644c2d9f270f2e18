/** `idlegrid submit`'s live view (issue 18 item 5): on a terminal only, and saying what moves. */
import * as assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { formatBytes, liveView } from '../../src/observe/index.js'

/** A terminal-like stream that keeps what was written. */
function fakeTerminal (tty: boolean): NodeJS.WriteStream & { text: () => string } {
  let written = ''
  const stream = new Writable({
    write (chunk, _enc, cb) {
      written += String(chunk)
      cb()
    }
  }) as unknown as NodeJS.WriteStream & { text: () => string }
  Object.assign(stream, { isTTY: tty, columns: 120, rows: 40, text: () => written })
  return stream
}

// eslint-disable-next-line no-control-regex
const plain = (s: string): string => s.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '')

describe('observe: the submit live view (issue 18 item 5)', () => {
  it('is off without a terminal and with --json', () => {
    assert.equal(liveView({ json: false, stream: fakeTerminal(false) }), undefined)
    assert.equal(liveView({ json: true, stream: fakeTerminal(true) }), undefined)
  })

  it('shows the bid window filling, the transfer with its rate, and prints lines above the bar', () => {
    const term = fakeTerminal(true)
    const view = liveView({ json: false, stream: term })
    assert.ok(view != null)
    const at = (event: Record<string, unknown>): void => { view.event({ type: 'auction', attempt: 1, event: event as any }) }
    at({ type: 'published', jobId: 'ab', windowMs: 1000 })
    at({ type: 'bid', provider: '12D3KooWAbCdEfGh', price: 2.5 })
    at({ type: 'bid', provider: '12D3KooWIjKlMnOp', price: 1.25 })
    const afterBids = plain(term.text())
    view.event({ type: 'sending', attempt: 1, sentBytes: 3 * 1024 * 1024, totalBytes: 4 * 1024 * 1024 })
    view.info('  | a log line')
    view.event({ type: 'receiving', attempt: 1, path: 'out.bin', receivedBytes: 2048 })
    view.stop()
    const all = plain(term.text())
    assert.match(afterBids, /auction: 2 bids, best 1\.25 USD\/GPU-h/)
    assert.match(all, /inputs 3\.0 MiB of 4\.0 MiB at [\d.]+ (B|KiB|MiB|GiB)\/s/)
    assert.match(all, / {2}\| a log line\n/)
    assert.match(all, /outputs 2\.0 KiB at /)
  })

  it('writes sizes in binary units', () => {
    assert.equal(formatBytes(512), '512 B')
    assert.equal(formatBytes(1536), '1.5 KiB')
    assert.equal(formatBytes(5 * 1024 ** 3), '5.0 GiB')
  })
})
