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

export interface CapabilityRecord {
  peerId: Uint8Array
  sequence: bigint
  issuedAt: bigint
  expiresAt: bigint
  gpus: CapabilityRecord.Gpu[]
  region: string
  residency: string
  priceFloorMicroUsd: bigint
  acceptedTiers: CapabilityRecord.Tier[]
  workloads: string[]
  allowedImages: string[]
  availability: CapabilityRecord.AvailabilityWindow[]
  timeZone: string
  cachedDatasets: Uint8Array[]
  maxJobMinutes: number
  maxTemperatureC: number
  maxPowerWatts: number
  preemptionGraceMs: number
  listenAddrs: Uint8Array[]
  runner: string
}

export namespace CapabilityRecord {
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

  export interface Gpu {
    model: string
    vramMib: number
    count: number
    computeCapability: string
    driverVersion: string
    uuidHash: Uint8Array[]
    simulated: boolean
  }

  export namespace Gpu {
    let _codec: Codec<Gpu>

    export const codec = (): Codec<Gpu> => {
      if (_codec == null) {
        _codec = message<Gpu>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.model != null && obj.model !== '')) {
            w.uint32(10)
            w.string(obj.model)
          }

          if ((obj.vramMib != null && obj.vramMib !== 0)) {
            w.uint32(16)
            w.uint32(obj.vramMib)
          }

          if ((obj.count != null && obj.count !== 0)) {
            w.uint32(24)
            w.uint32(obj.count)
          }

          if ((obj.computeCapability != null && obj.computeCapability !== '')) {
            w.uint32(34)
            w.string(obj.computeCapability)
          }

          if ((obj.driverVersion != null && obj.driverVersion !== '')) {
            w.uint32(42)
            w.string(obj.driverVersion)
          }

          if (obj.uuidHash != null) {
            for (const value of obj.uuidHash) {
              w.uint32(50)
              w.bytes(value)
            }
          }

          if ((obj.simulated != null && obj.simulated !== false)) {
            w.uint32(56)
            w.bool(obj.simulated)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            model: '',
            vramMib: 0,
            count: 0,
            computeCapability: '',
            driverVersion: '',
            uuidHash: [],
            simulated: false
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.model = reader.string()
                break
              }
              case 2: {
                obj.vramMib = reader.uint32()
                break
              }
              case 3: {
                obj.count = reader.uint32()
                break
              }
              case 4: {
                obj.computeCapability = reader.string()
                break
              }
              case 5: {
                obj.driverVersion = reader.string()
                break
              }
              case 6: {
                if (opts.limits?.uuidHash != null && obj.uuidHash.length === opts.limits.uuidHash) {
                  throw new MaxLengthError('Decode error - map field "uuidHash" had too many elements')
                }

                if (obj.uuidHash.length === 16) {
                  throw new MaxLengthError('Decode error - repeated field "uuidHash" had too many elements')
                }

                obj.uuidHash.push(reader.bytes())
                break
              }
              case 7: {
                obj.simulated = reader.bool()
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

    export const encode = (obj: Partial<Gpu>): Uint8Array => {
      return encodeMessage(obj, Gpu.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Gpu>): Gpu => {
      return decodeMessage(buf, Gpu.codec(), opts)
    }
  }

  export interface AvailabilityWindow {
    days: number
    startMinute: number
    endMinute: number
  }

  export namespace AvailabilityWindow {
    let _codec: Codec<AvailabilityWindow>

    export const codec = (): Codec<AvailabilityWindow> => {
      if (_codec == null) {
        _codec = message<AvailabilityWindow>((obj, w, opts = {}) => {
          if (opts.lengthDelimited !== false) {
            w.fork()
          }

          if ((obj.days != null && obj.days !== 0)) {
            w.uint32(8)
            w.uint32(obj.days)
          }

          if ((obj.startMinute != null && obj.startMinute !== 0)) {
            w.uint32(16)
            w.uint32(obj.startMinute)
          }

          if ((obj.endMinute != null && obj.endMinute !== 0)) {
            w.uint32(24)
            w.uint32(obj.endMinute)
          }

          if (opts.lengthDelimited !== false) {
            w.ldelim()
          }
        }, (reader, length, opts = {}) => {
          const obj: any = {
            days: 0,
            startMinute: 0,
            endMinute: 0
          }

          const end = length == null ? reader.len : reader.pos + length

          while (reader.pos < end) {
            const tag = reader.uint32()

            switch (tag >>> 3) {
              case 1: {
                obj.days = reader.uint32()
                break
              }
              case 2: {
                obj.startMinute = reader.uint32()
                break
              }
              case 3: {
                obj.endMinute = reader.uint32()
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

    export const encode = (obj: Partial<AvailabilityWindow>): Uint8Array => {
      return encodeMessage(obj, AvailabilityWindow.codec())
    }

    export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<AvailabilityWindow>): AvailabilityWindow => {
      return decodeMessage(buf, AvailabilityWindow.codec(), opts)
    }
  }

  let _codec: Codec<CapabilityRecord>

  export const codec = (): Codec<CapabilityRecord> => {
    if (_codec == null) {
      _codec = message<CapabilityRecord>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.peerId != null && obj.peerId.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.peerId)
        }

        if ((obj.sequence != null && obj.sequence !== 0n)) {
          w.uint32(16)
          w.uint64(obj.sequence)
        }

        if ((obj.issuedAt != null && obj.issuedAt !== 0n)) {
          w.uint32(24)
          w.uint64(obj.issuedAt)
        }

        if ((obj.expiresAt != null && obj.expiresAt !== 0n)) {
          w.uint32(32)
          w.uint64(obj.expiresAt)
        }

        if (obj.gpus != null) {
          for (const value of obj.gpus) {
            w.uint32(42)
            CapabilityRecord.Gpu.codec().encode(value, w)
          }
        }

        if ((obj.region != null && obj.region !== '')) {
          w.uint32(50)
          w.string(obj.region)
        }

        if ((obj.residency != null && obj.residency !== '')) {
          w.uint32(58)
          w.string(obj.residency)
        }

        if ((obj.priceFloorMicroUsd != null && obj.priceFloorMicroUsd !== 0n)) {
          w.uint32(64)
          w.uint64(obj.priceFloorMicroUsd)
        }

        if (obj.acceptedTiers != null) {
          for (const value of obj.acceptedTiers) {
            w.uint32(72)
            CapabilityRecord.Tier.codec().encode(value, w)
          }
        }

        if (obj.workloads != null) {
          for (const value of obj.workloads) {
            w.uint32(82)
            w.string(value)
          }
        }

        if (obj.allowedImages != null) {
          for (const value of obj.allowedImages) {
            w.uint32(90)
            w.string(value)
          }
        }

        if (obj.availability != null) {
          for (const value of obj.availability) {
            w.uint32(98)
            CapabilityRecord.AvailabilityWindow.codec().encode(value, w)
          }
        }

        if ((obj.timeZone != null && obj.timeZone !== '')) {
          w.uint32(106)
          w.string(obj.timeZone)
        }

        if (obj.cachedDatasets != null) {
          for (const value of obj.cachedDatasets) {
            w.uint32(114)
            w.bytes(value)
          }
        }

        if ((obj.maxJobMinutes != null && obj.maxJobMinutes !== 0)) {
          w.uint32(120)
          w.uint32(obj.maxJobMinutes)
        }

        if ((obj.maxTemperatureC != null && obj.maxTemperatureC !== 0)) {
          w.uint32(128)
          w.uint32(obj.maxTemperatureC)
        }

        if ((obj.maxPowerWatts != null && obj.maxPowerWatts !== 0)) {
          w.uint32(136)
          w.uint32(obj.maxPowerWatts)
        }

        if ((obj.preemptionGraceMs != null && obj.preemptionGraceMs !== 0)) {
          w.uint32(144)
          w.uint32(obj.preemptionGraceMs)
        }

        if (obj.listenAddrs != null) {
          for (const value of obj.listenAddrs) {
            w.uint32(154)
            w.bytes(value)
          }
        }

        if ((obj.runner != null && obj.runner !== '')) {
          w.uint32(162)
          w.string(obj.runner)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          peerId: EMPTY_BYTES,
          sequence: 0n,
          issuedAt: 0n,
          expiresAt: 0n,
          gpus: [],
          region: '',
          residency: '',
          priceFloorMicroUsd: 0n,
          acceptedTiers: [],
          workloads: [],
          allowedImages: [],
          availability: [],
          timeZone: '',
          cachedDatasets: [],
          maxJobMinutes: 0,
          maxTemperatureC: 0,
          maxPowerWatts: 0,
          preemptionGraceMs: 0,
          listenAddrs: [],
          runner: ''
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.peerId = reader.bytes()
              break
            }
            case 2: {
              obj.sequence = reader.uint64()
              break
            }
            case 3: {
              obj.issuedAt = reader.uint64()
              break
            }
            case 4: {
              obj.expiresAt = reader.uint64()
              break
            }
            case 5: {
              if (opts.limits?.gpus != null && obj.gpus.length === opts.limits.gpus) {
                throw new MaxLengthError('Decode error - map field "gpus" had too many elements')
              }

              if (obj.gpus.length === 16) {
                throw new MaxLengthError('Decode error - repeated field "gpus" had too many elements')
              }

              obj.gpus.push(CapabilityRecord.Gpu.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.gpus$
              }))
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
              obj.priceFloorMicroUsd = reader.uint64()
              break
            }
            case 9: {
              if (opts.limits?.acceptedTiers != null && obj.acceptedTiers.length === opts.limits.acceptedTiers) {
                throw new MaxLengthError('Decode error - map field "acceptedTiers" had too many elements')
              }

              if (obj.acceptedTiers.length === 3) {
                throw new MaxLengthError('Decode error - repeated field "acceptedTiers" had too many elements')
              }

              obj.acceptedTiers.push(CapabilityRecord.Tier.codec().decode(reader))
              break
            }
            case 10: {
              if (opts.limits?.workloads != null && obj.workloads.length === opts.limits.workloads) {
                throw new MaxLengthError('Decode error - map field "workloads" had too many elements')
              }

              if (obj.workloads.length === 8) {
                throw new MaxLengthError('Decode error - repeated field "workloads" had too many elements')
              }

              obj.workloads.push(reader.string())
              break
            }
            case 11: {
              if (opts.limits?.allowedImages != null && obj.allowedImages.length === opts.limits.allowedImages) {
                throw new MaxLengthError('Decode error - map field "allowedImages" had too many elements')
              }

              if (obj.allowedImages.length === 64) {
                throw new MaxLengthError('Decode error - repeated field "allowedImages" had too many elements')
              }

              obj.allowedImages.push(reader.string())
              break
            }
            case 12: {
              if (opts.limits?.availability != null && obj.availability.length === opts.limits.availability) {
                throw new MaxLengthError('Decode error - map field "availability" had too many elements')
              }

              if (obj.availability.length === 32) {
                throw new MaxLengthError('Decode error - repeated field "availability" had too many elements')
              }

              obj.availability.push(CapabilityRecord.AvailabilityWindow.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.availability$
              }))
              break
            }
            case 13: {
              obj.timeZone = reader.string()
              break
            }
            case 14: {
              if (opts.limits?.cachedDatasets != null && obj.cachedDatasets.length === opts.limits.cachedDatasets) {
                throw new MaxLengthError('Decode error - map field "cachedDatasets" had too many elements')
              }

              if (obj.cachedDatasets.length === 64) {
                throw new MaxLengthError('Decode error - repeated field "cachedDatasets" had too many elements')
              }

              obj.cachedDatasets.push(reader.bytes())
              break
            }
            case 15: {
              obj.maxJobMinutes = reader.uint32()
              break
            }
            case 16: {
              obj.maxTemperatureC = reader.uint32()
              break
            }
            case 17: {
              obj.maxPowerWatts = reader.uint32()
              break
            }
            case 18: {
              obj.preemptionGraceMs = reader.uint32()
              break
            }
            case 19: {
              if (opts.limits?.listenAddrs != null && obj.listenAddrs.length === opts.limits.listenAddrs) {
                throw new MaxLengthError('Decode error - map field "listenAddrs" had too many elements')
              }

              if (obj.listenAddrs.length === 16) {
                throw new MaxLengthError('Decode error - repeated field "listenAddrs" had too many elements')
              }

              obj.listenAddrs.push(reader.bytes())
              break
            }
            case 20: {
              obj.runner = reader.string()
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

  export const encode = (obj: Partial<CapabilityRecord>): Uint8Array => {
    return encodeMessage(obj, CapabilityRecord.codec())
  }

  export const decode = (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<CapabilityRecord>): CapabilityRecord => {
    return decodeMessage(buf, CapabilityRecord.codec(), opts)
  }
}
