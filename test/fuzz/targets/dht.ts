/**
 * The kad-dht rules every node runs on /idlegrid/... keys (src/capability/record/dht-rules.ts): the
 * record validator on mutated values (raw, and re-signed so the field checks are reached), on
 * mutated keys, and the selector on sets of mutated records, which must never throw and must
 * return an index into the set.
 */
import * as lp from 'it-length-prefixed'
import { Uint8ArrayList } from 'uint8arraylist'
import { DOMAIN } from '../../../protocols/ids.js'
import { capabilityRecordValidator, selectCapabilityRecord } from '../../../src/capability/record/dht-rules.js'
import { CapabilityError } from '../../../src/capability/errors.js'
import { MAX_RECORD_VALUE_BYTES } from '../../../src/capability/record/record.js'
import { capabilityKey } from '../../../src/capability/record/record-key.js'
import { sealEnvelope } from '../../../src/identity/index.js'
import { fixtures } from '../fixtures.js'
import { bytesInput } from '../mutate.js'
import { BoundError, type FuzzTarget, type TargetFactory } from '../target.js'

const validator = capabilityRecordValidator()

const valueSigned: TargetFactory = {
  name: 'dht/validator-signed',
  build: async () => {
    const fx = await fixtures()
    const key = capabilityKey(fx.provider.peerId)
    return {
      name: 'dht/validator-signed',
      what: 'capability record validator on re-signed mutated CapabilityRecord payloads',
      typed: [CapabilityError],
      arbitrary: bytesInput(fx.payloads.CapabilityRecord, { maxBytes: MAX_RECORD_VALUE_BYTES }),
      async: true,
      weight: 3,
      run: async input => {
        await validator(key, sealEnvelope(fx.provider.key, fx.provider.peerId, DOMAIN.capability, input))
      }
    }
  }
}

const valueRaw: TargetFactory = {
  name: 'dht/validator-raw',
  build: async () => {
    const fx = await fixtures()
    const key = capabilityKey(fx.provider.peerId)
    return {
      name: 'dht/validator-raw',
      what: 'capability record validator on mutated DHT values',
      typed: [CapabilityError],
      arbitrary: bytesInput([fx.capabilityValue, ...fx.envelopes[DOMAIN.bid]], {
        maxBytes: MAX_RECORD_VALUE_BYTES + 64
      }),
      async: true,
      weight: 1,
      run: async (input) => { await validator(key, input) }
    }
  }
}

const keyTarget: TargetFactory = {
  name: 'dht/validator-key',
  build: async () => {
    const fx = await fixtures()
    const keys = [capabilityKey(fx.provider.peerId), capabilityKey(fx.renter.peerId), new TextEncoder().encode('/idlegrid/other/x')]
    return {
      name: 'dht/validator-key',
      what: 'capability record validator on mutated DHT keys (valid value)',
      typed: [CapabilityError],
      arbitrary: bytesInput(keys, { maxBytes: 256 }),
      async: true,
      weight: 2,
      run: async (input) => { await validator(input, fx.capabilityValue) }
    }
  }
}

/** A set of records as one byte string: length-prefixed values, as the corpus keeps it. */
function splitRecords (input: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = []
  let pos = 0
  while (pos < input.length && out.length < 16) {
    let len = 0
    let mul = 1
    let b = 0x80
    for (let i = 0; i < 5 && pos < input.length && b >= 0x80; i++) {
      b = input[pos++]
      len += (b & 0x7f) * mul
      mul *= 128
    }
    out.push(input.subarray(pos, pos + len))
    pos += len
  }
  return out.length === 0 ? [input] : out
}

function joinRecords (records: Uint8Array[]): Uint8Array {
  return new Uint8ArrayList(...records.map(r => lp.encode.single(r))).subarray()
}

const selector: TargetFactory = {
  name: 'dht/selector',
  build: async () => {
    const fx = await fixtures()
    const key = capabilityKey(fx.provider.peerId)
    const seeds = [
      joinRecords([fx.capabilityValue]),
      joinRecords([fx.capabilityValue, fx.envelopes[DOMAIN.bid][0], fx.capabilityValue])
    ]
    return {
      name: 'dht/selector',
      what: 'selectCapabilityRecord over sets of mutated records: never throws, index in range',
      typed: [],
      arbitrary: bytesInput(seeds, { maxBytes: 48 * 1024 }),
      async: false,
      weight: 1,
      run: (input) => {
        const records = splitRecords(input)
        const best = selectCapabilityRecord(key, records, fx.now)
        if (!Number.isInteger(best) || best < 0 || best >= records.length) throw new BoundError(`selector returned ${best} for ${records.length} records`)
      }
    } satisfies FuzzTarget
  }
}

export const dhtTargets: TargetFactory[] = [valueSigned, valueRaw, keyTarget, selector]
