/**
 * The job stream (/idlegrid/job/1.0.0) as a provider or renter reads it: length-prefixed
 * JobFrames through FrameChannel (frame bound on the prefix, bounded decode, one oneof member,
 * remote Error frames), every path a frame names through checkRelativePath, and the Start
 * frame's award check (verifyAwardForWinner) on re-signed mutated awards and job requests.
 */
import fc from 'fast-check'
import { LIMITS } from '../../../protocols/codec.js'
import { DOMAIN } from '../../../protocols/ids.js'
import { checkRelativePath } from '../../../src/exec/shared/digest.js'
import { ExecError } from '../../../src/exec/errors.js'
import { FrameChannel, type ReceivedFrame } from '../../../src/exec/shared/job-stream.js'
import { sealEnvelope } from '../../../src/identity/index.js'
import { verifyAwardForWinner } from '../../../src/market/shared/award-check.js'
import { MarketError } from '../../../src/market/errors.js'
import { fixtures, frameStream } from '../fixtures.js'
import { applyMutation, bytesInput, mutationArb } from '../mutate.js'
import { BoundError, checkDecoded, type FuzzTarget, type TargetFactory } from '../target.js'

const CHUNK_SIZES = [1, 7, 64, 1024, 65_536]

/** A stream whose source yields `input` in pieces and whose sink drains what we send. */
function streamOf (input: Uint8Array): any {
  const size = CHUNK_SIZES[input.length % CHUNK_SIZES.length]
  return {
    source: (async function * () {
      for (let at = 0; at < input.length; at += size) yield input.subarray(at, at + size)
    })(),
    sink: async (source: AsyncIterable<unknown>) => { for await (const _ of source) { /* drained */ } },
    abort () {},
    close: async () => {}
  }
}

function pathsOf (frame: ReceivedFrame): string[] {
  return [
    ...(frame.start?.inputs ?? []).map(f => f.path),
    ...(frame.result?.outputs ?? []).map(f => f.path),
    ...(frame.inputChunk != null ? [frame.inputChunk.path] : []),
    ...(frame.outputChunk != null ? [frame.outputChunk.path] : [])
  ]
}

const jobStream: TargetFactory = {
  name: 'exec/job-stream',
  build: async () => {
    const fx = await fixtures()
    const frames = fx.payloads.JobFrame
    const sequences = [[0, 1, 2, 10], [3, 5, 6, 7, 8, 9], [4], [11], [0, 1, 1, 2]].map(ix =>
      frameStream(ix.map(i => frames[i % frames.length]))
    )
    // frames mutated one by one, then framed correctly; or the framed stream mutated as bytes
    const structured = fc
      .array(
        fc.tuple(fc.nat({ max: frames.length - 1 }), fc.array(mutationArb, { maxLength: 3 })),
        { minLength: 1, maxLength: 6 }
      )
      .map(items =>
        frameStream(
          items.map(([i, ms]) => ms.reduce((b, m) => applyMutation(b, m, frames).subarray(0, 64 * 1024), frames[i]))
        )
      )
    return {
      name: 'exec/job-stream',
      what: 'FrameChannel.next over a stream of mutated length-prefixed frames; checkRelativePath on named paths',
      typed: [{ cls: ExecError, codes: ['ERR_JOB_STREAM', 'ERR_UNSAFE_PATH'] }],
      arbitrary: fc.oneof(
        { arbitrary: structured, weight: 3 },
        { arbitrary: bytesInput(sequences, { maxBytes: 256 * 1024 }), weight: 2 }
      ),
      async: true,
      weight: 3,
      run: async (input) => {
        const ch = new FrameChannel(streamOf(input), { idleMs: 10_000 })
        try {
          for (let n = 0; ; n++) {
            const frame = await ch.next()
            if (frame == null) break
            if (n > input.length) throw new BoundError(`${n} frames from ${input.length} bytes`)
            checkDecoded(frame, LIMITS.jobFrame, input.length)
            for (const path of pathsOf(frame)) checkRelativePath(path)
          }
        } finally {
          ch.abort()
        }
      }
    } satisfies FuzzTarget
  }
}

function startAward (which: 'award' | 'job-request'): TargetFactory {
  const name = `exec/start-${which}`
  return {
    name,
    build: async () => {
      const fx = await fixtures()
      const award = fx.envelopes[DOMAIN.award][0]
      const job = fx.envelopes[DOMAIN.jobRequest][0]
      const seeds = which === 'award' ? fx.payloads.Award : fx.payloads.JobRequest
      const domain = which === 'award' ? DOMAIN.award : DOMAIN.jobRequest
      return {
        name,
        what: `verifyAwardForWinner with a re-signed mutated ${which} (the Start frame check)`,
        typed: [{ cls: MarketError, codes: ['ERR_AWARD_CHECK'] }],
        arbitrary: bytesInput(seeds, { maxBytes: 9 * 1024 }),
        async: false,
        weight: 2,
        run: (input) => {
          const signed = sealEnvelope(fx.renter.key, fx.renter.peerId, domain, input)
          verifyAwardForWinner(which === 'award' ? signed : award, which === 'award' ? job : signed, fx.provider.peerId, fx.now + 2_000)
        }
      } satisfies FuzzTarget
    }
  }
}

export const execTargets: TargetFactory[] = [jobStream, startAward('award'), startAward('job-request')]
