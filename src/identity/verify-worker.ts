/**
 * A signature-verifying worker thread (verify-pool.ts): each message is a packed batch, each
 * reply one byte per signature (1 accepted, 0 refused) under the strict rule, noble deciding
 * every native "no" here rather than on the node's main thread.
 */
import { parentPort } from 'node:worker_threads'
import { unpackBatch, type BatchReply, type BatchRequest } from './verify-batch.js'
import { verifyBytesQuick } from './signature.js'

parentPort?.on('message', ({ id, packed }: BatchRequest) => {
  const items = unpackBatch(new Uint8Array(packed))
  const results = new Uint8Array(items.length)
  for (let i = 0; i < items.length; i++) results[i] = verifyBytesQuick(items[i].publicKey, items[i].message, items[i].signature) ? 1 : 0
  const reply: BatchReply = { id, results }
  parentPort?.postMessage(reply, [results.buffer])
})
