/**
 * The renter ships a job: the input manifest (paths, sizes, sha256), the Start frame (award,
 * job request, runtime, manifest), the inputs as InputChunk frames in manifest order,
 * InputEnd; then waits for the provider's Accepted or Rejected.
 */
import { createReadStream } from 'node:fs'
import { checkRelativePath, hashFile, sortEntries } from './digest.js'
import { JobRejectedError, JobStreamError } from './errors.js'
import { CHUNK_BYTES, frameKind, type FrameChannel } from './job-stream.js'
import type { AwardedJob, JobEvent, JobInput, JobPayload } from './renter.js'
import type { FileEntry, JobFrame } from '../../protocols/job.js'

/** Least time between two `sending` events. */
const SENDING_EVENT_MS = 500

/** The manifest of the payload's inputs, sorted by path, with sizes and sha256. */
export async function inputManifest (inputs: readonly JobInput[]): Promise<Array<FileEntry & { file: string }>> {
  const seen = new Set<string>()
  const out: Array<FileEntry & { file: string }> = []
  for (const input of inputs) {
    checkRelativePath(input.path)
    if (seen.has(input.path)) throw new JobStreamError('PROTOCOL', `input ${input.path} listed twice`)
    seen.add(input.path)
    out.push({ path: input.path, file: input.file, ...(await hashFile(input.file)) })
  }
  return sortEntries(out)
}

/** Sends Start, every input file and InputEnd, with `sending` events as it goes. */
export async function sendJob (ch: FrameChannel, awarded: AwardedJob, payload: JobPayload, manifest: ReadonlyArray<FileEntry & { file: string }>, attempt: number, emit: (event: JobEvent) => void): Promise<void> {
  const env = Object.entries(payload.runtime.env ?? {}).map(([key, value]) => ({ key, value }))
  await ch.send({
    start: {
      award: awarded.award,
      jobRequest: awarded.jobRequest,
      runtime: { image: payload.runtime.image ?? '', command: payload.runtime.command, env, timeoutMs: BigInt(payload.runtime.timeoutMs) },
      inputs: manifest.map(({ path, size, sha256 }) => ({ path, size, sha256 }))
    }
  })
  const totalBytes = manifest.reduce((sum, f) => sum + Number(f.size), 0)
  let sentBytes = 0
  let lastReport = 0
  for (const file of manifest) {
    let offset = 0n
    for await (const piece of createReadStream(file.file, { highWaterMark: CHUNK_BYTES })) {
      const data = piece as Buffer
      await ch.sendChunk('inputChunk', file.path, offset, data)
      offset += BigInt(data.byteLength)
      sentBytes += data.byteLength
      if (Date.now() - lastReport > SENDING_EVENT_MS) { lastReport = Date.now(); emit({ type: 'sending', attempt, sentBytes, totalBytes }) }
    }
  }
  await ch.send({ inputEnd: {} })
  emit({ type: 'sending', attempt, sentBytes, totalBytes })
}

/** The provider's answer to the job: resolves on Accepted; JobRejectedError on Rejected. */
export async function awaitAccepted (ch: FrameChannel, acceptMs: number): Promise<void> {
  const answer = await ch.next(acceptMs)
  if (answer == null) throw new JobStreamError('CANCELLED', 'provider closed the stream before accepting')
  const kind = frameKind(answer)
  if (kind === 'rejected') {
    const r = answer.rejected as JobFrame.Rejected
    throw new JobRejectedError(String(r.code), r.reason.slice(0, 512))
  }
  if (kind !== 'accepted') throw new JobStreamError('PROTOCOL', `expected Accepted, got ${kind}`)
}
