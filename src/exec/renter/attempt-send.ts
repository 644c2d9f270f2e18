/**
 * The renter ships a job: the input manifest (paths, sizes, sha256), the Start frame (award,
 * job request, runtime, manifest), the inputs as InputChunk frames in manifest order,
 * InputEnd; then waits for the provider's Accepted or Rejected, which may come while the
 * inputs still go.
 */
import { createReadStream } from 'node:fs'
import { checkRelativePath, hashFile, sortEntries } from '../shared/digest.js'
import { jobRejected, streamError } from '../errors.js'
import { CHUNK_BYTES, frameKind, withDeadline, type FrameChannel, type ReceivedFrame } from '../shared/job-stream.js'
import type { AwardedJob, JobEvent, JobInput, JobPayload } from './attempt.js'
import type { FileEntry, JobFrame } from '../../../protocols/job.js'

/** Least time between two `sending` events. */
const SENDING_EVENT_MS = 500

/** The manifest of the payload's inputs, sorted by path, with sizes and sha256. */
export async function inputManifest (inputs: readonly JobInput[]): Promise<Array<FileEntry & { file: string }>> {
  const seen = new Set<string>()
  const out: Array<FileEntry & { file: string }> = []
  for (const input of inputs) {
    checkRelativePath(input.path)
    if (seen.has(input.path)) throw streamError('PROTOCOL', `input ${input.path} listed twice`)
    seen.add(input.path)
    out.push({
      path: input.path,
      file: input.file,
      ...(await hashFile(input.file)),
      ...(input.public === true ? { public: true } : {})
    })
  }
  return sortEntries(out)
}

/** Sends the Start frame: the award, the job request, the runtime and the whole manifest. */
async function sendStart (
  ch: FrameChannel,
  awarded: AwardedJob,
  payload: JobPayload,
  manifest: ReadonlyArray<FileEntry & { file: string }>
): Promise<void> {
  const env = Object.entries(payload.runtime.env ?? {}).map(([key, value]) => ({ key, value }))
  await ch.send({
    start: {
      award: awarded.award,
      jobRequest: awarded.jobRequest,
      runtime: { image: payload.runtime.image ?? '', command: payload.runtime.command, env, timeoutMs: BigInt(payload.runtime.timeoutMs), shmSizeMib: payload.runtime.shmSizeMiB ?? 0 },
      inputs: manifest.map(({ path, size, sha256, public: pub }) => ({
        path,
        size,
        sha256,
        ...(pub === true ? { public: true } : {})
      }))
    }
  })
}

/** What the provider's input cache holds (job/1.1.0): those files are not sent. */
export interface HeldInputs {
  digests: ReadonlySet<string>
  bytes: number
}

/**
 * One attempt's job as it is shipped: the stream, the award, the payload and its manifest (with
 * local files), and where events go.
 */
export interface Shipment {
  ch: FrameChannel
  awarded: AwardedJob
  payload: JobPayload
  manifest: ReadonlyArray<FileEntry & { file: string }>
  attempt: number
  emit: (event: JobEvent) => void
}

/**
 * Sends Start (unless already sent), every input file the provider does not hold and
 * InputEnd, with `sending` events as it goes.
 */
export async function sendJob (
  shipment: Shipment,
  { onChunk = () => {}, held }: { onChunk?: () => void, held?: HeldInputs } = {}
): Promise<void> {
  const { ch, awarded, payload, manifest, attempt, emit } = shipment
  if (held == null) await sendStart(ch, awarded, payload, manifest)
  const toSend = held == null ? manifest : manifest.filter(f => !held.digests.has(Buffer.from(f.sha256).toString('hex')))
  const cachedBytes = held?.bytes ?? 0
  const totalBytes = toSend.reduce((sum, f) => sum + Number(f.size), 0)
  let sentBytes = 0
  let lastReport = 0
  for (const file of toSend) {
    let offset = 0n
    for await (const piece of createReadStream(file.file, { highWaterMark: CHUNK_BYTES })) {
      const data = piece as Buffer
      await ch.sendChunk('inputChunk', file.path, offset, data)
      onChunk()
      offset += BigInt(data.byteLength)
      sentBytes += data.byteLength
      if (Date.now() - lastReport > SENDING_EVENT_MS) { lastReport = Date.now(); emit({ type: 'sending', attempt, sentBytes, totalBytes, cachedBytes }) }
    }
  }
  await ch.send({ inputEnd: {} })
  emit({ type: 'sending', attempt, sentBytes, totalBytes, cachedBytes })
}

/**
 * job/1.1.0: sends Start and reads the provider's answer to it: Held (the files it holds, each
 * one of the manifest's), or a refusal (ExecError ERR_JOB_REJECTED, as for any first answer).
 */
export async function startAskingHeld (
  { ch, awarded, payload, manifest }: Shipment,
  answerMs: number
): Promise<HeldInputs> {
  await sendStart(ch, awarded, payload, manifest)
  const frame = await ch.next(answerMs)
  if (frame == null || frameKind(frame) !== 'held') {
    accepted({ frame })
    throw streamError('PROTOCOL', 'Accepted before the inputs were sent')
  }
  const sizes = new Map(manifest.map(f => [Buffer.from(f.sha256).toString('hex'), Number(f.size)]))
  const digests = new Set<string>()
  let bytes = 0
  for (const d of (frame.held as JobFrame.Held).sha256) {
    const hex = Buffer.from(d).toString('hex')
    const size = sizes.get(hex)
    if (size == null) throw streamError('PROTOCOL', `Held names ${hex.slice(0, 64)}, which is none of the job's inputs`)
    if (!digests.has(hex)) bytes += size
    digests.add(hex)
  }
  return { digests, bytes }
}

/**
 * The longest wait for the provider's first frame while inputs still go (setTimeout's bound): the
 * sending is what runs then.
 */
const WHILE_SENDING_MS = 2 ** 31 - 1
/** After a failed send, how long the provider's answer (its reason) may take to arrive. */
const ANSWER_AFTER_SEND_FAILED_MS = 1_000

type Answer = { frame: ReceivedFrame | undefined } | { err: unknown }

/**
 * Ships the job (sendJob) and resolves once the provider accepts it, listening from the first
 * frame on: a provider refuses the Start frame (Rejected, Error, or it closes) before it reads
 * any input and then reads no more, so inputs still going would wait forever on a muxer window
 * that never opens. Its answer stops the sending. The wait for Accepted, `acceptMs`, starts
 * once the last input is handed to the stream. A provider that takes no input chunk for
 * `stallMs` and says nothing (it stopped reading) ends the shipping with IDLE_TIMEOUT.
 * `onHeld` sees the provider's Held frame (job/1.1.0; nothing held on job/1.0.0) before any input goes.
 */
export async function shipJob (
  shipment: Shipment,
  { acceptMs, stallMs, askHeld = false, onHeld }: {
    acceptMs: number
    stallMs: number
    askHeld?: boolean
    onHeld?: (held: HeldInputs) => void
  }
): Promise<void> {
  const { ch, manifest } = shipment
  // job/1.1.0 with inputs: Start first, then only what the provider's cache does not hold
  const held = askHeld && manifest.length > 0 ? await startAskingHeld(shipment, acceptMs) : undefined
  // a provider on job/1.0.0 spares the renter nothing: to a claim, it holds nothing
  onHeld?.(held ?? { digests: new Set(), bytes: 0 })
  // one read for the whole wait: a FrameChannel reads one frame at a time
  const answer: Promise<Answer> = ch.next(WHILE_SENDING_MS).then(frame => ({ frame }), (err: unknown) => ({ err }))
  // re-armed by every input chunk handed to the stream
  let stallTimer: NodeJS.Timeout | undefined
  let onStall: () => void = () => {}
  const stalled = new Promise<{ stalled: true }>(resolve => { onStall = () => { resolve({ stalled: true }) } })
  const arm = (): void => { clearTimeout(stallTimer); stallTimer = setTimeout(onStall, stallMs) }
  arm()
  const sending = sendJob(shipment, { onChunk: arm, held }).then(
    () => ({ sent: true as const }),
    (err: unknown) => ({ sendErr: err })
  )
  const first = await Promise.race([sending, answer.then(a => ({ answered: a })), stalled]).finally(() => {
    clearTimeout(stallTimer)
  })
  if ('stalled' in first) {
    ch.abort()
    await sending
    throw streamError('IDLE_TIMEOUT', `the provider took no input for ${stallMs} ms`)
  }
  if ('answered' in first) {
    // any answer before the last input is queued ends the sending: the provider reads no more
    // (a refusal), or lies (Accepted comes only after InputEnd, which goes out after it is queued)
    const early = first.answered
    ch.abort()
    await sending
    if ('frame' in early && early.frame != null && frameKind(early.frame) === 'accepted') throw streamError('PROTOCOL', 'Accepted before the inputs were all sent')
    return accepted(early)
  }
  const sent = first
  if ('sendErr' in sent) {
    // the stream broke while sending: the provider's answer, if one came, says why
    const a = await withDeadline(answer, ANSWER_AFTER_SEND_FAILED_MS, () => sent.sendErr as Error).catch(
      (err: unknown) => ({ err })
    )
    if ('frame' in a && a.frame != null) return accepted(a)
    throw sent.sendErr
  }
  return accepted(await withDeadline(answer, acceptMs, () => streamError('IDLE_TIMEOUT', `no frame within ${acceptMs} ms`)))
}

/** The provider's first answer: resolves on Accepted; ExecError ERR_JOB_REJECTED on Rejected. */
function accepted (a: Answer): void {
  if ('err' in a) throw a.err
  const answer = a.frame
  if (answer == null) throw streamError('CANCELLED', 'provider closed the stream before accepting')
  const kind = frameKind(answer)
  if (kind === 'rejected') {
    const r = answer.rejected as JobFrame.Rejected
    throw jobRejected(String(r.code), r.reason.slice(0, 512))
  }
  if (kind !== 'accepted') throw streamError('PROTOCOL', `expected Accepted, got ${kind}`)
}
