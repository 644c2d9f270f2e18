/* eslint-disable import/export */
/* eslint-disable complexity */
/* eslint-disable @typescript-eslint/no-namespace */
/* eslint-disable @typescript-eslint/no-unnecessary-boolean-literal-compare */
/* eslint-disable @typescript-eslint/no-empty-interface */
/* eslint-disable import/consistent-type-specifier-style */
/* eslint-disable @typescript-eslint/no-unused-vars */

import { EMPTY_BYTES } from './empty-bytes.js'
import { decodeMessage, encodeMessage, enumeration, MaxLengthError, message } from 'protons-runtime'
import type { Codec, DecodeOptions } from 'protons-runtime'
import type { Uint8ArrayList } from 'uint8arraylist'

export enum PricingRule {
  FIRST_PRICE = 'FIRST_PRICE',
  SECOND_PRICE = 'SECOND_PRICE'
}

enum __PricingRuleValues {
  FIRST_PRICE = 0,
  SECOND_PRICE = 1
}

export namespace PricingRule {
  let _codec: Codec<PricingRule> | undefined
  export const codec = (): Codec<PricingRule> => {
    return (_codec ??= enumeration<PricingRule>(__PricingRuleValues))
  }
}

export enum DeclineReason {
  REASON_UNSPECIFIED = 'REASON_UNSPECIFIED',
  NO_CAPACITY = 'NO_CAPACITY',
  VRAM = 'VRAM',
  GPU_MODEL = 'GPU_MODEL',
  REGION = 'REGION',
  RESIDENCY = 'RESIDENCY',
  TIER = 'TIER',
  WORKLOAD = 'WORKLOAD',
  IMAGE = 'IMAGE',
  AVAILABILITY_WINDOW = 'AVAILABILITY_WINDOW',
  PRICE_FLOOR = 'PRICE_FLOOR',
  THERMAL = 'THERMAL',
  POWER = 'POWER',
  MAX_JOB_LENGTH = 'MAX_JOB_LENGTH',
  PREEMPTION_NOTICE = 'PREEMPTION_NOTICE',
  OTHER = 'OTHER',
  WILL_BID = 'WILL_BID',
  UNKNOWN_JOB = 'UNKNOWN_JOB',
  EXPIRED = 'EXPIRED',
  GPU_COUNT = 'GPU_COUNT'
}

enum __DeclineReasonValues {
  REASON_UNSPECIFIED = 0,
  NO_CAPACITY = 1,
  VRAM = 2,
  GPU_MODEL = 3,
  REGION = 4,
  RESIDENCY = 5,
  TIER = 6,
  WORKLOAD = 7,
  IMAGE = 8,
  AVAILABILITY_WINDOW = 9,
  PRICE_FLOOR = 10,
  THERMAL = 11,
  POWER = 12,
  MAX_JOB_LENGTH = 13,
  PREEMPTION_NOTICE = 14,
  OTHER = 15,
  WILL_BID = 16,
  UNKNOWN_JOB = 17,
  EXPIRED = 18,
  GPU_COUNT = 19
}

export namespace DeclineReason {
  let _codec: Codec<DeclineReason> | undefined
  export const codec = (): Codec<DeclineReason> => {
    return (_codec ??= enumeration<DeclineReason>(__DeclineReasonValues))
  }
}

export interface JobRequest {
  jobId: Uint8Array
  renter: Uint8Array
  tier: JobRequest.Tier
  workload: string
  image: string
  estDurationMs: bigint
  constraints?: JobRequest.Constraints
  datasetDigests: Uint8Array[]
  bidWindowMs: number
  createdAt: bigint
  expiresAt: bigint
  nonce: Uint8Array
  pricingRule: PricingRule
  renterAddrs: Uint8Array[]
  lease?: JobRequest.Lease
  gpus: number
  datasetBytes?: bigint
}

export namespace JobRequest {
  export enum Tier {
    TIER_UNSPECIFIED = 'TIER_UNSPECIFIED',
    GOLD = 'GOLD',
    SILVER = 'SILVER',
    BRONZE = 'BRONZE'
  }

  enum __TierValues {
    TIER_UNSPECIFIED = 0,
    GOLD = 1,
    SILVER = 2,
    BRONZE = 3
  }

  export namespace Tier {
    let _codec: Codec<Tier> | undefined
    export const codec = (): Codec<Tier> => {
      return (_codec ??= enumeration<Tier>(__TierValues))
    }
  }

  export interface Constraints {
    minVramMib: number
    gpuModels: string[]
    regions: string[]
    residency: string
    maxPriceMicroUsd: bigint
    maxLatencyMs: number
    minReliabilityPpm: number
    preemptible: boolean
    minPreemptionNoticeMs: number
    excludeSimulated: boolean
  }

  export namespace Constraints {
    let _codec: Codec<Constraints>

    export const codec = (): Codec<Constraints> => {
      if (_codec == null) {
        _codec = message<Constraints>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.minVramMib != null && obj.minVramMib !== 0)) {
            w.uint32(8)
            w.uint32(obj.minVramMib)
          }

          if (obj.gpuModels != null) {
            for (const value of obj.gpuModels) {
              w.uint32(18)
              w.string(value)
            }
          }

          if (obj.regions != null) {
            for (const value of obj.regions) {
              w.uint32(26)
              w.string(value)
            }
          }

          if ((obj.residency != null && obj.residency !== '')) {
            w.uint32(34)
            w.string(obj.residency)
          }

          if ((obj.maxPriceMicroUsd != null && obj.maxPriceMicroUsd !== 0n)) {
            w.uint32(40)
            w.uint64(obj.maxPriceMicroUsd)
          }

          if ((obj.maxLatencyMs != null && obj.maxLatencyMs !== 0)) {
            w.uint32(48)
            w.uint32(obj.maxLatencyMs)
          }

          if ((obj.minReliabilityPpm != null && obj.minReliabilityPpm !== 0)) {
            w.uint32(56)
            w.uint32(obj.minReliabilityPpm)
          }

          if ((obj.preemptible != null && obj.preemptible !== false)) {
            w.uint32(64)
            w.bool(obj.preemptible)
          }

          if ((obj.minPreemptionNoticeMs != null && obj.minPreemptionNoticeMs !== 0)) {
            w.uint32(72)
            w.uint32(obj.minPreemptionNoticeMs)
          }

          if ((obj.excludeSimulated != null && obj.excludeSimulated !== false)) {
            w.uint32(80)
            w.bool(obj.excludeSimulated)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            minVramMib: 0,
            gpuModels: [],
            regions: [],
            residency: '',
            maxPriceMicroUsd: 0n,
            maxLatencyMs: 0,
            minReliabilityPpm: 0,
            preemptible: false,
            minPreemptionNoticeMs: 0,
            excludeSimulated: false
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.minVramMib = reader.uint32()
                break
              }
              case 2: {
                if (opts.limits?.gpuModels != null && obj.gpuModels.length === opts.limits.gpuModels) {
                  throw new MaxLengthError('Decode error - map field "gpuModels" had too many elements')
                }

                if (obj.gpuModels.length === 16) {
                  throw new MaxLengthError('Decode error - repeated field "gpuModels" had too many elements')
                }

                obj.gpuModels.push(reader.string())
                break
              }
              case 3: {
                if (opts.limits?.regions != null && obj.regions.length === opts.limits.regions) {
                  throw new MaxLengthError('Decode error - map field "regions" had too many elements')
                }

                if (obj.regions.length === 16) {
                  throw new MaxLengthError('Decode error - repeated field "regions" had too many elements')
                }

                obj.regions.push(reader.string())
                break
              }
              case 4: {
                obj.residency = reader.string()
                break
              }
              case 5: {
                obj.maxPriceMicroUsd = reader.uint64()
                break
              }
              case 6: {
                obj.maxLatencyMs = reader.uint32()
                break
              }
              case 7: {
                obj.minReliabilityPpm = reader.uint32()
                break
              }
              case 8: {
                obj.preemptible = reader.bool()
                break
              }
              case 9: {
                obj.minPreemptionNoticeMs = reader.uint32()
                break
              }
              case 10: {
                obj.excludeSimulated = reader.bool()
                break
              }
              default: {
                reader.skipType(tag & 7)
                break
              }
            }
          }

          return obj
        })
      }

      return _codec
    }

    export const encode = (obj: Partial<Constraints>): Uint8Array => {
      return encodeMessage(obj, Constraints.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Constraints>): Constraints => {
      return decodeMessage(buf, Constraints.codec(), opts)
    }
  }

  export interface Lease {
    minDurationMs: bigint
    healthPath: string
  }

  export namespace Lease {
    let _codec: Codec<Lease>

    export const codec = (): Codec<Lease> => {
      if (_codec == null) {
        _codec = message<Lease>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.minDurationMs != null && obj.minDurationMs !== 0n)) {
            w.uint32(8)
            w.uint64(obj.minDurationMs)
          }

          if ((obj.healthPath != null && obj.healthPath !== '')) {
            w.uint32(18)
            w.string(obj.healthPath)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            minDurationMs: 0n,
            healthPath: ''
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.minDurationMs = reader.uint64()
                break
              }
              case 2: {
                obj.healthPath = reader.string()
                break
              }
              default: {
                reader.skipType(tag & 7)
                break
              }
            }
          }

          return obj
        })
      }

      return _codec
    }

    export const encode = (obj: Partial<Lease>): Uint8Array => {
      return encodeMessage(obj, Lease.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Lease>): Lease => {
      return decodeMessage(buf, Lease.codec(), opts)
    }
  }

  let _codec: Codec<JobRequest>

  export const codec = (): Codec<JobRequest> => {
    if (_codec == null) {
      _codec = message<JobRequest>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.jobId)
        }

        if ((obj.renter != null && obj.renter.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.renter)
        }

        if (obj.tier != null && __TierValues[obj.tier] !== 0) {
          w.uint32(24)
          JobRequest.Tier.codec().encode(obj.tier, w)
        }

        if ((obj.workload != null && obj.workload !== '')) {
          w.uint32(34)
          w.string(obj.workload)
        }

        if ((obj.image != null && obj.image !== '')) {
          w.uint32(42)
          w.string(obj.image)
        }

        if ((obj.estDurationMs != null && obj.estDurationMs !== 0n)) {
          w.uint32(48)
          w.uint64(obj.estDurationMs)
        }

        if (obj.constraints != null) {
          w.uint32(58)
          JobRequest.Constraints.codec().encode(obj.constraints, w)
        }

        if (obj.datasetDigests != null) {
          for (const value of obj.datasetDigests) {
            w.uint32(66)
            w.bytes(value)
          }
        }

        if ((obj.bidWindowMs != null && obj.bidWindowMs !== 0)) {
          w.uint32(72)
          w.uint32(obj.bidWindowMs)
        }

        if ((obj.createdAt != null && obj.createdAt !== 0n)) {
          w.uint32(80)
          w.uint64(obj.createdAt)
        }

        if ((obj.expiresAt != null && obj.expiresAt !== 0n)) {
          w.uint32(88)
          w.uint64(obj.expiresAt)
        }

        if ((obj.nonce != null && obj.nonce.byteLength > 0)) {
          w.uint32(98)
          w.bytes(obj.nonce)
        }

        if (obj.pricingRule != null && __PricingRuleValues[obj.pricingRule] !== 0) {
          w.uint32(104)
          PricingRule.codec().encode(obj.pricingRule, w)
        }

        if (obj.renterAddrs != null) {
          for (const value of obj.renterAddrs) {
            w.uint32(114)
            w.bytes(value)
          }
        }

        if (obj.lease != null) {
          w.uint32(122)
          JobRequest.Lease.codec().encode(obj.lease, w)
        }

        if ((obj.gpus != null && obj.gpus !== 0)) {
          w.uint32(128)
          w.uint32(obj.gpus)
        }

        if (obj.datasetBytes != null) {
          w.uint32(136)
          w.uint64(obj.datasetBytes)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: EMPTY_BYTES,
          renter: EMPTY_BYTES,
          tier: Tier.TIER_UNSPECIFIED,
          workload: '',
          image: '',
          estDurationMs: 0n,
          datasetDigests: [],
          bidWindowMs: 0,
          createdAt: 0n,
          expiresAt: 0n,
          nonce: EMPTY_BYTES,
          pricingRule: PricingRule.FIRST_PRICE,
          renterAddrs: [],
          gpus: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.bytes()
              break
            }
            case 2: {
              obj.renter = reader.bytes()
              break
            }
            case 3: {
              obj.tier = JobRequest.Tier.codec().decode(reader)
              break
            }
            case 4: {
              obj.workload = reader.string()
              break
            }
            case 5: {
              obj.image = reader.string()
              break
            }
            case 6: {
              obj.estDurationMs = reader.uint64()
              break
            }
            case 7: {
              obj.constraints = JobRequest.Constraints.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.constraints
              })
              break
            }
            case 8: {
              if (opts.limits?.datasetDigests != null && obj.datasetDigests.length === opts.limits.datasetDigests) {
                throw new MaxLengthError('Decode error - map field "datasetDigests" had too many elements')
              }

              if (obj.datasetDigests.length === 16) {
                throw new MaxLengthError('Decode error - repeated field "datasetDigests" had too many elements')
              }

              obj.datasetDigests.push(reader.bytes())
              break
            }
            case 9: {
              obj.bidWindowMs = reader.uint32()
              break
            }
            case 10: {
              obj.createdAt = reader.uint64()
              break
            }
            case 11: {
              obj.expiresAt = reader.uint64()
              break
            }
            case 12: {
              obj.nonce = reader.bytes()
              break
            }
            case 13: {
              obj.pricingRule = PricingRule.codec().decode(reader)
              break
            }
            case 14: {
              if (opts.limits?.renterAddrs != null && obj.renterAddrs.length === opts.limits.renterAddrs) {
                throw new MaxLengthError('Decode error - map field "renterAddrs" had too many elements')
              }

              if (obj.renterAddrs.length === 4) {
                throw new MaxLengthError('Decode error - repeated field "renterAddrs" had too many elements')
              }

              obj.renterAddrs.push(reader.bytes())
              break
            }
            case 15: {
              obj.lease = JobRequest.Lease.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.lease
              })
              break
            }
            case 16: {
              obj.gpus = reader.uint32()
              break
            }
            case 17: {
              obj.datasetBytes = reader.uint64()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<JobRequest>): Uint8Array => {
    return encodeMessage(obj, JobRequest.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobRequest>): JobRequest => {
    return decodeMessage(buf, JobRequest.codec(), opts)
  }
}

export interface Bid {
  jobId: Uint8Array
  provider: Uint8Array
  priceMicroUsd: bigint
  gpuModel: string
  vramMib: number
  region: string
  residency: string
  createdAt: bigint
  expiresAt: bigint
  capabilitySeq: bigint
  jobNonce: Uint8Array
  simulated: boolean
  cachedDatasets: number
  addrs: Uint8Array[]
  cachedBytes?: bigint
}

export namespace Bid {
  let _codec: Codec<Bid>

  export const codec = (): Codec<Bid> => {
    if (_codec == null) {
      _codec = message<Bid>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.jobId)
        }

        if ((obj.provider != null && obj.provider.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.provider)
        }

        if ((obj.priceMicroUsd != null && obj.priceMicroUsd !== 0n)) {
          w.uint32(24)
          w.uint64(obj.priceMicroUsd)
        }

        if ((obj.gpuModel != null && obj.gpuModel !== '')) {
          w.uint32(34)
          w.string(obj.gpuModel)
        }

        if ((obj.vramMib != null && obj.vramMib !== 0)) {
          w.uint32(40)
          w.uint32(obj.vramMib)
        }

        if ((obj.region != null && obj.region !== '')) {
          w.uint32(50)
          w.string(obj.region)
        }

        if ((obj.residency != null && obj.residency !== '')) {
          w.uint32(58)
          w.string(obj.residency)
        }

        if ((obj.createdAt != null && obj.createdAt !== 0n)) {
          w.uint32(64)
          w.uint64(obj.createdAt)
        }

        if ((obj.expiresAt != null && obj.expiresAt !== 0n)) {
          w.uint32(72)
          w.uint64(obj.expiresAt)
        }

        if ((obj.capabilitySeq != null && obj.capabilitySeq !== 0n)) {
          w.uint32(80)
          w.uint64(obj.capabilitySeq)
        }

        if ((obj.jobNonce != null && obj.jobNonce.byteLength > 0)) {
          w.uint32(90)
          w.bytes(obj.jobNonce)
        }

        if ((obj.simulated != null && obj.simulated !== false)) {
          w.uint32(96)
          w.bool(obj.simulated)
        }

        if ((obj.cachedDatasets != null && obj.cachedDatasets !== 0)) {
          w.uint32(104)
          w.uint32(obj.cachedDatasets)
        }

        if (obj.addrs != null) {
          for (const value of obj.addrs) {
            w.uint32(114)
            w.bytes(value)
          }
        }

        if (obj.cachedBytes != null) {
          w.uint32(120)
          w.uint64(obj.cachedBytes)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: EMPTY_BYTES,
          provider: EMPTY_BYTES,
          priceMicroUsd: 0n,
          gpuModel: '',
          vramMib: 0,
          region: '',
          residency: '',
          createdAt: 0n,
          expiresAt: 0n,
          capabilitySeq: 0n,
          jobNonce: EMPTY_BYTES,
          simulated: false,
          cachedDatasets: 0,
          addrs: []
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.bytes()
              break
            }
            case 2: {
              obj.provider = reader.bytes()
              break
            }
            case 3: {
              obj.priceMicroUsd = reader.uint64()
              break
            }
            case 4: {
              obj.gpuModel = reader.string()
              break
            }
            case 5: {
              obj.vramMib = reader.uint32()
              break
            }
            case 6: {
              obj.region = reader.string()
              break
            }
            case 7: {
              obj.residency = reader.string()
              break
            }
            case 8: {
              obj.createdAt = reader.uint64()
              break
            }
            case 9: {
              obj.expiresAt = reader.uint64()
              break
            }
            case 10: {
              obj.capabilitySeq = reader.uint64()
              break
            }
            case 11: {
              obj.jobNonce = reader.bytes()
              break
            }
            case 12: {
              obj.simulated = reader.bool()
              break
            }
            case 13: {
              obj.cachedDatasets = reader.uint32()
              break
            }
            case 14: {
              if (opts.limits?.addrs != null && obj.addrs.length === opts.limits.addrs) {
                throw new MaxLengthError('Decode error - map field "addrs" had too many elements')
              }

              if (obj.addrs.length === 4) {
                throw new MaxLengthError('Decode error - repeated field "addrs" had too many elements')
              }

              obj.addrs.push(reader.bytes())
              break
            }
            case 15: {
              obj.cachedBytes = reader.uint64()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<Bid>): Uint8Array => {
    return encodeMessage(obj, Bid.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Bid>): Bid => {
    return decodeMessage(buf, Bid.codec(), opts)
  }
}

export interface Award {
  jobId: Uint8Array
  renter: Uint8Array
  winner: Uint8Array
  clearingPriceMicroUsd: bigint
  pricingRule: PricingRule
  bidsDigest: Uint8Array
  runnerUp: Uint8Array[]
  acceptDeadline: bigint
  createdAt: bigint
  expiresAt: bigint
  attempt: number
  validBids: number
  winnerBidHash: Uint8Array
  jobNonce: Uint8Array
  ranking: Award.RankingInput[]
  reliabilityWeightPpm: number
  latencyWeightPpm: number
  localityWeightPpm: number
}

export namespace Award {
  export interface RankingInput {
    bidHash: Uint8Array
    reliabilityPpm: number
    rttMs?: number
    localityDenied?: boolean
  }

  export namespace RankingInput {
    let _codec: Codec<RankingInput>

    export const codec = (): Codec<RankingInput> => {
      if (_codec == null) {
        _codec = message<RankingInput>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.bidHash != null && obj.bidHash.byteLength > 0)) {
            w.uint32(10)
            w.bytes(obj.bidHash)
          }

          if ((obj.reliabilityPpm != null && obj.reliabilityPpm !== 0)) {
            w.uint32(16)
            w.uint32(obj.reliabilityPpm)
          }

          if (obj.rttMs != null) {
            w.uint32(24)
            w.uint32(obj.rttMs)
          }

          if (obj.localityDenied != null) {
            w.uint32(32)
            w.bool(obj.localityDenied)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            bidHash: EMPTY_BYTES,
            reliabilityPpm: 0
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.bidHash = reader.bytes()
                break
              }
              case 2: {
                obj.reliabilityPpm = reader.uint32()
                break
              }
              case 3: {
                obj.rttMs = reader.uint32()
                break
              }
              case 4: {
                obj.localityDenied = reader.bool()
                break
              }
              default: {
                reader.skipType(tag & 7)
                break
              }
            }
          }

          return obj
        })
      }

      return _codec
    }

    export const encode = (obj: Partial<RankingInput>): Uint8Array => {
      return encodeMessage(obj, RankingInput.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<RankingInput>): RankingInput => {
      return decodeMessage(buf, RankingInput.codec(), opts)
    }
  }

  let _codec: Codec<Award>

  export const codec = (): Codec<Award> => {
    if (_codec == null) {
      _codec = message<Award>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.jobId)
        }

        if ((obj.renter != null && obj.renter.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.renter)
        }

        if ((obj.winner != null && obj.winner.byteLength > 0)) {
          w.uint32(26)
          w.bytes(obj.winner)
        }

        if ((obj.clearingPriceMicroUsd != null && obj.clearingPriceMicroUsd !== 0n)) {
          w.uint32(32)
          w.uint64(obj.clearingPriceMicroUsd)
        }

        if (obj.pricingRule != null && __PricingRuleValues[obj.pricingRule] !== 0) {
          w.uint32(40)
          PricingRule.codec().encode(obj.pricingRule, w)
        }

        if ((obj.bidsDigest != null && obj.bidsDigest.byteLength > 0)) {
          w.uint32(50)
          w.bytes(obj.bidsDigest)
        }

        if (obj.runnerUp != null) {
          for (const value of obj.runnerUp) {
            w.uint32(58)
            w.bytes(value)
          }
        }

        if ((obj.acceptDeadline != null && obj.acceptDeadline !== 0n)) {
          w.uint32(64)
          w.uint64(obj.acceptDeadline)
        }

        if ((obj.createdAt != null && obj.createdAt !== 0n)) {
          w.uint32(72)
          w.uint64(obj.createdAt)
        }

        if ((obj.expiresAt != null && obj.expiresAt !== 0n)) {
          w.uint32(80)
          w.uint64(obj.expiresAt)
        }

        if ((obj.attempt != null && obj.attempt !== 0)) {
          w.uint32(88)
          w.uint32(obj.attempt)
        }

        if ((obj.validBids != null && obj.validBids !== 0)) {
          w.uint32(96)
          w.uint32(obj.validBids)
        }

        if ((obj.winnerBidHash != null && obj.winnerBidHash.byteLength > 0)) {
          w.uint32(106)
          w.bytes(obj.winnerBidHash)
        }

        if ((obj.jobNonce != null && obj.jobNonce.byteLength > 0)) {
          w.uint32(114)
          w.bytes(obj.jobNonce)
        }

        if (obj.ranking != null) {
          for (const value of obj.ranking) {
            w.uint32(122)
            Award.RankingInput.codec().encode(value, w)
          }
        }

        if ((obj.reliabilityWeightPpm != null && obj.reliabilityWeightPpm !== 0)) {
          w.uint32(128)
          w.uint32(obj.reliabilityWeightPpm)
        }

        if ((obj.latencyWeightPpm != null && obj.latencyWeightPpm !== 0)) {
          w.uint32(136)
          w.uint32(obj.latencyWeightPpm)
        }

        if ((obj.localityWeightPpm != null && obj.localityWeightPpm !== 0)) {
          w.uint32(144)
          w.uint32(obj.localityWeightPpm)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: EMPTY_BYTES,
          renter: EMPTY_BYTES,
          winner: EMPTY_BYTES,
          clearingPriceMicroUsd: 0n,
          pricingRule: PricingRule.FIRST_PRICE,
          bidsDigest: EMPTY_BYTES,
          runnerUp: [],
          acceptDeadline: 0n,
          createdAt: 0n,
          expiresAt: 0n,
          attempt: 0,
          validBids: 0,
          winnerBidHash: EMPTY_BYTES,
          jobNonce: EMPTY_BYTES,
          ranking: [],
          reliabilityWeightPpm: 0,
          latencyWeightPpm: 0,
          localityWeightPpm: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.bytes()
              break
            }
            case 2: {
              obj.renter = reader.bytes()
              break
            }
            case 3: {
              obj.winner = reader.bytes()
              break
            }
            case 4: {
              obj.clearingPriceMicroUsd = reader.uint64()
              break
            }
            case 5: {
              obj.pricingRule = PricingRule.codec().decode(reader)
              break
            }
            case 6: {
              obj.bidsDigest = reader.bytes()
              break
            }
            case 7: {
              if (opts.limits?.runnerUp != null && obj.runnerUp.length === opts.limits.runnerUp) {
                throw new MaxLengthError('Decode error - map field "runnerUp" had too many elements')
              }

              if (obj.runnerUp.length === 64) {
                throw new MaxLengthError('Decode error - repeated field "runnerUp" had too many elements')
              }

              obj.runnerUp.push(reader.bytes())
              break
            }
            case 8: {
              obj.acceptDeadline = reader.uint64()
              break
            }
            case 9: {
              obj.createdAt = reader.uint64()
              break
            }
            case 10: {
              obj.expiresAt = reader.uint64()
              break
            }
            case 11: {
              obj.attempt = reader.uint32()
              break
            }
            case 12: {
              obj.validBids = reader.uint32()
              break
            }
            case 13: {
              obj.winnerBidHash = reader.bytes()
              break
            }
            case 14: {
              obj.jobNonce = reader.bytes()
              break
            }
            case 15: {
              if (opts.limits?.ranking != null && obj.ranking.length === opts.limits.ranking) {
                throw new MaxLengthError('Decode error - map field "ranking" had too many elements')
              }

              if (obj.ranking.length === 72) {
                throw new MaxLengthError('Decode error - repeated field "ranking" had too many elements')
              }

              obj.ranking.push(Award.RankingInput.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.ranking$
              }))
              break
            }
            case 16: {
              obj.reliabilityWeightPpm = reader.uint32()
              break
            }
            case 17: {
              obj.latencyWeightPpm = reader.uint32()
              break
            }
            case 18: {
              obj.localityWeightPpm = reader.uint32()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<Award>): Uint8Array => {
    return encodeMessage(obj, Award.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Award>): Award => {
    return decodeMessage(buf, Award.codec(), opts)
  }
}

export interface BidAck {
  status: BidAck.Status
  detail: string
}

export namespace BidAck {
  export enum Status {
    KEPT = 'KEPT',
    NOT_KEPT = 'NOT_KEPT',
    LATE = 'LATE',
    UNKNOWN_AUCTION = 'UNKNOWN_AUCTION',
    INVALID = 'INVALID'
  }

  enum __StatusValues {
    KEPT = 0,
    NOT_KEPT = 1,
    LATE = 2,
    UNKNOWN_AUCTION = 3,
    INVALID = 4
  }

  export namespace Status {
    let _codec: Codec<Status> | undefined
    export const codec = (): Codec<Status> => {
      return (_codec ??= enumeration<Status>(__StatusValues))
    }
  }

  let _codec: Codec<BidAck>

  export const codec = (): Codec<BidAck> => {
    if (_codec == null) {
      _codec = message<BidAck>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if (obj.status != null && __StatusValues[obj.status] !== 0) {
          w.uint32(8)
          BidAck.Status.codec().encode(obj.status, w)
        }

        if ((obj.detail != null && obj.detail !== '')) {
          w.uint32(18)
          w.string(obj.detail)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          status: Status.KEPT,
          detail: ''
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.status = BidAck.Status.codec().decode(reader)
              break
            }
            case 2: {
              obj.detail = reader.string()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<BidAck>): Uint8Array => {
    return encodeMessage(obj, BidAck.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BidAck>): BidAck => {
    return decodeMessage(buf, BidAck.codec(), opts)
  }
}

export interface BidsAuditRequest {
  award: Uint8Array
}

export namespace BidsAuditRequest {
  let _codec: Codec<BidsAuditRequest>

  export const codec = (): Codec<BidsAuditRequest> => {
    if (_codec == null) {
      _codec = message<BidsAuditRequest>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.award != null && obj.award.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.award)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          award: EMPTY_BYTES
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.award = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<BidsAuditRequest>): Uint8Array => {
    return encodeMessage(obj, BidsAuditRequest.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BidsAuditRequest>): BidsAuditRequest => {
    return decodeMessage(buf, BidsAuditRequest.codec(), opts)
  }
}

export interface BidsAuditResponse {
  jobRequest: Uint8Array
  bids: Uint8Array[]
}

export namespace BidsAuditResponse {
  let _codec: Codec<BidsAuditResponse>

  export const codec = (): Codec<BidsAuditResponse> => {
    if (_codec == null) {
      _codec = message<BidsAuditResponse>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobRequest != null && obj.jobRequest.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.jobRequest)
        }

        if (obj.bids != null) {
          for (const value of obj.bids) {
            w.uint32(18)
            w.bytes(value)
          }
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobRequest: EMPTY_BYTES,
          bids: []
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobRequest = reader.bytes()
              break
            }
            case 2: {
              if (opts.limits?.bids != null && obj.bids.length === opts.limits.bids) {
                throw new MaxLengthError('Decode error - map field "bids" had too many elements')
              }

              if (obj.bids.length === 1000) {
                throw new MaxLengthError('Decode error - repeated field "bids" had too many elements')
              }

              obj.bids.push(reader.bytes())
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<BidsAuditResponse>): Uint8Array => {
    return encodeMessage(obj, BidsAuditResponse.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BidsAuditResponse>): BidsAuditResponse => {
    return decodeMessage(buf, BidsAuditResponse.codec(), opts)
  }
}

export interface AcceptRequest {
  award: Uint8Array
}

export namespace AcceptRequest {
  let _codec: Codec<AcceptRequest>

  export const codec = (): Codec<AcceptRequest> => {
    if (_codec == null) {
      _codec = message<AcceptRequest>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.award != null && obj.award.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.award)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          award: EMPTY_BYTES
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.award = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<AcceptRequest>): Uint8Array => {
    return encodeMessage(obj, AcceptRequest.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<AcceptRequest>): AcceptRequest => {
    return decodeMessage(buf, AcceptRequest.codec(), opts)
  }
}

export interface AcceptResponse {
  jobId: Uint8Array
  provider: Uint8Array
  attempt: number
  accepted: boolean
  reason: DeclineReason
  detail: string
  createdAt: bigint
}

export namespace AcceptResponse {
  let _codec: Codec<AcceptResponse>

  export const codec = (): Codec<AcceptResponse> => {
    if (_codec == null) {
      _codec = message<AcceptResponse>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.jobId)
        }

        if ((obj.provider != null && obj.provider.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.provider)
        }

        if ((obj.attempt != null && obj.attempt !== 0)) {
          w.uint32(24)
          w.uint32(obj.attempt)
        }

        if ((obj.accepted != null && obj.accepted !== false)) {
          w.uint32(32)
          w.bool(obj.accepted)
        }

        if (obj.reason != null && __DeclineReasonValues[obj.reason] !== 0) {
          w.uint32(40)
          DeclineReason.codec().encode(obj.reason, w)
        }

        if ((obj.detail != null && obj.detail !== '')) {
          w.uint32(50)
          w.string(obj.detail)
        }

        if ((obj.createdAt != null && obj.createdAt !== 0n)) {
          w.uint32(56)
          w.uint64(obj.createdAt)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: EMPTY_BYTES,
          provider: EMPTY_BYTES,
          attempt: 0,
          accepted: false,
          reason: DeclineReason.REASON_UNSPECIFIED,
          detail: '',
          createdAt: 0n
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.bytes()
              break
            }
            case 2: {
              obj.provider = reader.bytes()
              break
            }
            case 3: {
              obj.attempt = reader.uint32()
              break
            }
            case 4: {
              obj.accepted = reader.bool()
              break
            }
            case 5: {
              obj.reason = DeclineReason.codec().decode(reader)
              break
            }
            case 6: {
              obj.detail = reader.string()
              break
            }
            case 7: {
              obj.createdAt = reader.uint64()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<AcceptResponse>): Uint8Array => {
    return encodeMessage(obj, AcceptResponse.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<AcceptResponse>): AcceptResponse => {
    return decodeMessage(buf, AcceptResponse.codec(), opts)
  }
}

export interface ExplainRequest {
  jobId: Uint8Array
  jobRequest: Uint8Array
}

export namespace ExplainRequest {
  let _codec: Codec<ExplainRequest>

  export const codec = (): Codec<ExplainRequest> => {
    if (_codec == null) {
      _codec = message<ExplainRequest>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.jobId)
        }

        if ((obj.jobRequest != null && obj.jobRequest.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.jobRequest)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: EMPTY_BYTES,
          jobRequest: EMPTY_BYTES
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.bytes()
              break
            }
            case 2: {
              obj.jobRequest = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<ExplainRequest>): Uint8Array => {
    return encodeMessage(obj, ExplainRequest.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<ExplainRequest>): ExplainRequest => {
    return decodeMessage(buf, ExplainRequest.codec(), opts)
  }
}

export interface Decline {
  jobId: Uint8Array
  provider: Uint8Array
  reason: DeclineReason
  detail: string
  createdAt: bigint
}

export namespace Decline {
  let _codec: Codec<Decline>

  export const codec = (): Codec<Decline> => {
    if (_codec == null) {
      _codec = message<Decline>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.jobId)
        }

        if ((obj.provider != null && obj.provider.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.provider)
        }

        if (obj.reason != null && __DeclineReasonValues[obj.reason] !== 0) {
          w.uint32(24)
          DeclineReason.codec().encode(obj.reason, w)
        }

        if ((obj.detail != null && obj.detail !== '')) {
          w.uint32(34)
          w.string(obj.detail)
        }

        if ((obj.createdAt != null && obj.createdAt !== 0n)) {
          w.uint32(40)
          w.uint64(obj.createdAt)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: EMPTY_BYTES,
          provider: EMPTY_BYTES,
          reason: DeclineReason.REASON_UNSPECIFIED,
          detail: '',
          createdAt: 0n
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.bytes()
              break
            }
            case 2: {
              obj.provider = reader.bytes()
              break
            }
            case 3: {
              obj.reason = DeclineReason.codec().decode(reader)
              break
            }
            case 4: {
              obj.detail = reader.string()
              break
            }
            case 5: {
              obj.createdAt = reader.uint64()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      })
    }

    return _codec
  }

  export const encode = (obj: Partial<Decline>): Uint8Array => {
    return encodeMessage(obj, Decline.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Decline>): Decline => {
    return decodeMessage(buf, Decline.codec(), opts)
  }
}
