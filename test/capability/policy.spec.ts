import * as assert from 'node:assert/strict'
import { parsePolicy, applyPolicyFlags, imageAllowed, residencyOf } from '../../src/capability/policy/policy.js'
import type { ProviderPolicy } from '../../src/capability/policy/policy.js'
import { isAvailable, availableFor, nextChange, localWeekMinute } from '../../src/capability/policy/availability.js'
import { parseWindow, parseWindows, formatWindow } from '../../src/capability/policy/windows.js'
import { ConfigError } from '../../src/config/validate.js'

const DIGEST = 'a'.repeat(64)
const utc = (iso: string): number => Date.parse(iso + 'Z')
const base = { region: 'eu-west', priceFloor: 1.2 }

function configError (field: string, match?: RegExp): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`)
    assert.equal(err.field, field)
    assert.equal(err.code, 'ERR_CONFIG')
    assert.ok(err.message.includes(`"${field}"`), err.message)
    if (match != null) assert.match(err.message, match)
    return true
  }
}

describe('capability/policy', () => {
  describe('parsePolicy', () => {
    it('fills defaults', () => {
      const expected: ProviderPolicy = {
        region: 'eu-west',
        residency: 'eu',
        priceFloor: 1.2,
        priceFloorMicroUsd: 1_200_000,
        tiers: ['gold', 'silver', 'bronze'],
        workloads: ['inference', 'training', 'batch-inference', 'evaluation', 'sweep'],
        images: [],
        availability: {
          timeZone: 'UTC',
          windows: [{ days: 0x7f, startMinute: 0, endMinute: 1440 }],
          windowsText: ['always']
        },
        maxJobMinutes: 1440,
        thermal: { maxTemperatureC: 85 },
        power: {},
        datasets: [],
        preemptionGraceSeconds: 10
      }
      assert.deepEqual(parsePolicy(base), expected)
    })

    it('reads every field', () => {
      const p = parsePolicy({
        region: 'US-East-1',
        residency: 'us',
        priceFloor: '0.45',
        tiers: ['bronze', 'Silver', 'bronze'],
        workloads: 'inference, evaluation',
        images: ['nvcr.io/nvidia/pytorch:*', 'ghcr.io/acme/infer', 'localhost:5000/x:Latest'],
        availability: { timeZone: 'Europe/Berlin', windows: ['mon-fri 19:00-07:00', 'sat-sun 00:00-24:00'] },
        maxJobMinutes: 480,
        thermal: { maxTemperatureC: 80 },
        power: { maxPowerWatts: 350 },
        datasets: ['sha256:' + 'AB'.repeat(32), DIGEST, DIGEST],
        preemptionGraceSeconds: 0
      })
      assert.equal(p.region, 'us-east-1')
      assert.equal(p.residency, 'us')
      assert.equal(p.priceFloor, 0.45)
      assert.equal(p.priceFloorMicroUsd, 450_000)
      assert.deepEqual(p.tiers, ['bronze', 'silver'])
      assert.deepEqual(p.workloads, ['inference', 'evaluation'])
      assert.equal(p.images.length, 3)
      assert.equal(p.availability.timeZone, 'Europe/Berlin')
      assert.deepEqual(p.availability.windows, [
        { days: 0x1f, startMinute: 19 * 60, endMinute: 7 * 60 },
        { days: 0x60, startMinute: 0, endMinute: 1440 }
      ])
      assert.deepEqual(p.availability.windowsText, ['mon-fri 19:00-07:00', 'sat-sun 00:00-24:00'])
      assert.equal(p.maxJobMinutes, 480)
      assert.deepEqual(p.thermal, { maxTemperatureC: 80 })
      assert.deepEqual(p.power, { maxPowerWatts: 350 })
      assert.deepEqual(p.datasets, ['ab'.repeat(32), DIGEST])
      assert.equal(p.preemptionGraceSeconds, 0)
    })

    it('derives residency from the region prefix', () => {
      for (const [region, zone] of [['eu-west', 'eu'], ['eu-central-2', 'eu'], ['us-east', 'us'], ['ap-south', 'ap'],
        ['sa-east', 'sa'], ['ca-central', 'ca'], ['me-south', 'me'], ['af-south', 'af']]) {
        assert.equal(parsePolicy({ ...base, region }).residency, zone, region)
        assert.equal(residencyOf(region as string), zone)
      }
      assert.equal(parsePolicy({ ...base, region: 'eu-west', residency: 'EU' }).residency, 'eu')
    })

    it('a residency that disagrees with the region is an error', () => {
      assert.throws(() => parsePolicy({ ...base, region: 'eu-west', residency: 'us' }),
        configError('provider.residency', /"eu" to agree with region "eu-west"/))
    })

    const bad: Array<[string, Record<string, unknown>, string]> = [
      ['missing region', { priceFloor: 1 }, 'provider.region'],
      ['bad region', { ...base, region: 'europe' }, 'provider.region'],
      ['region with spaces', { ...base, region: 'eu west' }, 'provider.region'],
      ['region not a string', { ...base, region: 5 }, 'provider.region'],
      ['bad residency', { ...base, residency: 'e1' }, 'provider.residency'],
      ['missing priceFloor', { region: 'eu-west' }, 'provider.priceFloor'],
      ['zero priceFloor', { ...base, priceFloor: 0 }, 'provider.priceFloor'],
      ['negative priceFloor', { ...base, priceFloor: -1 }, 'provider.priceFloor'],
      ['text priceFloor', { ...base, priceFloor: 'cheap' }, 'provider.priceFloor'],
      ['sub-micro priceFloor', { ...base, priceFloor: 1e-9 }, 'provider.priceFloor'],
      ['unknown tier', { ...base, tiers: ['gold', 'platinum'] }, 'provider.tiers[1]'],
      ['empty tiers', { ...base, tiers: [] }, 'provider.tiers'],
      ['unknown workload', { ...base, workloads: ['mining'] }, 'provider.workloads[0]'],
      ['images not a list', { ...base, images: 5 }, 'provider.images'],
      ['bad image', { ...base, images: ['ok/image', 'Bad Image'] }, 'provider.images[1]'],
      ['glob not at the end', { ...base, images: ['nvcr.io/*/pytorch'] }, 'provider.images[0]'],
      ['availability not a map', { ...base, availability: 'always' }, 'provider.availability'],
      ['unknown availability key', { ...base, availability: { tz: 'UTC' } }, 'provider.availability.tz'],
      ['bad time zone', { ...base, availability: { timeZone: 'Mars/Olympus' } }, 'provider.availability.timeZone'],
      ['bad window', { ...base, availability: { windows: ['always', 'mon-fry 19:00-07:00'] } }, 'provider.availability.windows[1]'],
      ['bad window time', { ...base, availability: { windows: ['mon 19:00-25:00'] } }, 'provider.availability.windows[0]'],
      ['empty window', { ...base, availability: { windows: ['mon 10:00-10:00'] } }, 'provider.availability.windows[0]'],
      ['no windows', { ...base, availability: { windows: [] } }, 'provider.availability.windows'],
      ['maxJobMinutes fraction', { ...base, maxJobMinutes: 1.5 }, 'provider.maxJobMinutes'],
      ['maxJobMinutes zero', { ...base, maxJobMinutes: 0 }, 'provider.maxJobMinutes'],
      ['maxTemperatureC too high', { ...base, thermal: { maxTemperatureC: 200 } }, 'provider.thermal.maxTemperatureC'],
      ['maxTemperatureC fraction', { ...base, thermal: { maxTemperatureC: 82.5 } }, 'provider.thermal.maxTemperatureC'],
      ['too many windows', { ...base, availability: { windows: Array(33).fill('always') } }, 'provider.availability.windows'],
      ['too many images', { ...base, images: Array.from({ length: 65 }, (_, i) => `img${i}`) }, 'provider.images'],
      ['unknown thermal key', { ...base, thermal: { max: 80 } }, 'provider.thermal.max'],
      ['maxPowerWatts zero', { ...base, power: { maxPowerWatts: 0 } }, 'provider.power.maxPowerWatts'],
      ['bad dataset digest', { ...base, datasets: [DIGEST, 'abc'] }, 'provider.datasets[1]'],
      ['non-hex dataset digest', { ...base, datasets: ['z'.repeat(64)] }, 'provider.datasets[0]'],
      ['negative grace', { ...base, preemptionGraceSeconds: -1 }, 'provider.preemptionGraceSeconds'],
      ['zero slots per renter', { ...base, maxSlotsPerRenter: 0 }, 'provider.maxSlotsPerRenter'],
      ['fractional slots per renter', { ...base, maxSlotsPerRenter: 1.5 }, 'provider.maxSlotsPerRenter'],
      ['zero disk budget', { ...base, diskBudgetGiB: 0 }, 'provider.diskBudgetGiB'],
      ['disk budget not a number', { ...base, diskBudgetGiB: 'lots' }, 'provider.diskBudgetGiB'],
      ['unknown key', { ...base, pricefloor: 1 }, 'provider.pricefloor']
    ]
    for (const [what, raw, field] of bad) {
      it(`${what} → ${field}`, () => { assert.throws(() => parsePolicy(raw), configError(field)) })
    }

    it('not a mapping', () => {
      assert.throws(() => parsePolicy(['eu-west']), configError('provider'))
    })

    it('uses the given field prefix', () => {
      assert.throws(() => parsePolicy({ ...base, tiers: ['x'] }, 'config.provider'), configError('config.provider.tiers[0]'))
    })
  })

  describe('applyPolicyFlags', () => {
    const file = {
      region: 'eu-west',
      priceFloor: 2,
      tiers: ['gold'],
      availability: { timeZone: 'Europe/Berlin', windows: ['always'] },
      thermal: { maxTemperatureC: 80 }
    }

    it('flags override the file without touching it', () => {
      const before = structuredClone(file)
      const merged = applyPolicyFlags(file, {
        region: 'us-east',
        'price-floor': '1.20',
        tiers: 'bronze,silver',
        workloads: ['inference', 'evaluation'],
        images: 'nvcr.io/nvidia/*',
        windows: 'mon-fri 19:00-07:00; sat-sun',
        'max-job-minutes': '90',
        'max-power': '300',
        datasets: [DIGEST],
        grace: '30',
        'max-slots-per-renter': '2',
        'disk-budget': '0.5',
        verbose: 'true' // not a policy flag: ignored
      })
      assert.deepEqual(file, before)
      const p = parsePolicy(merged)
      assert.equal(p.region, 'us-east')
      assert.equal(p.residency, 'us')
      assert.equal(p.priceFloorMicroUsd, 1_200_000)
      assert.deepEqual(p.tiers, ['bronze', 'silver'])
      assert.deepEqual(p.workloads, ['inference', 'evaluation'])
      assert.deepEqual(p.images, ['nvcr.io/nvidia/*'])
      assert.deepEqual(p.availability.windowsText, ['mon-fri 19:00-07:00', 'sat-sun 00:00-24:00'])
      assert.equal(p.availability.timeZone, 'Europe/Berlin') // kept from the file
      assert.equal(p.thermal.maxTemperatureC, 80) // kept from the file
      assert.equal(p.maxJobMinutes, 90)
      assert.equal(p.power.maxPowerWatts, 300)
      assert.deepEqual(p.datasets, [DIGEST])
      assert.equal(p.preemptionGraceSeconds, 30)
      assert.equal(p.maxSlotsPerRenter, 2)
      assert.equal(p.diskBudgetGiB, 0.5)
    })

    it('time zone, temperature and residency flags; repeated scalar: last wins', () => {
      const p = parsePolicy(applyPolicyFlags(file, {
        'time-zone': 'America/New_York', 'max-temp': '75', residency: 'eu', 'price-floor': ['3', '4'], windows: ['sat', 'sun']
      }))
      assert.equal(p.availability.timeZone, 'America/New_York')
      assert.equal(p.thermal.maxTemperatureC, 75)
      assert.equal(p.residency, 'eu')
      assert.equal(p.priceFloor, 4)
      assert.deepEqual(p.availability.windowsText, ['sat 00:00-24:00', 'sun 00:00-24:00'])
    })

    it('works without a file', () => {
      const p = parsePolicy(applyPolicyFlags(undefined, { region: 'ap-south', 'price-floor': '0.8' }))
      assert.equal(p.residency, 'ap')
    })

    it('bad flag values name the field', () => {
      assert.throws(() => parsePolicy(applyPolicyFlags(file, { tiers: 'gold,platinum' })), configError('provider.tiers[1]'))
      assert.throws(() => parsePolicy(applyPolicyFlags(file, { windows: 'always;mon 9-17' })), configError('provider.availability.windows[1]'))
      assert.throws(() => parsePolicy(applyPolicyFlags(file, { 'max-temp': 'hot' })), configError('provider.thermal.maxTemperatureC'))
      assert.throws(() => parsePolicy(applyPolicyFlags(file, { 'time-zone': 'Nowhere/City' })), configError('provider.availability.timeZone'))
      assert.throws(() => parsePolicy(applyPolicyFlags(file, { residency: 'us' })), configError('provider.residency'))
      assert.throws(() => parsePolicy(applyPolicyFlags(file, { 'max-slots-per-renter': '0' })), configError('provider.maxSlotsPerRenter'))
      assert.throws(() => parsePolicy(applyPolicyFlags(file, { 'disk-budget': '-1' })), configError('provider.diskBudgetGiB', /greater than 0/))
    })

    it('a non-mapping file section is an error', () => {
      assert.throws(() => applyPolicyFlags('eu-west', {}), configError('provider'))
    })
  })

  describe('imageAllowed', () => {
    const allowed = ['nvcr.io/nvidia/pytorch:*', 'ghcr.io/acme/infer', 'python:3.12-slim']
    it('glob suffix, whole repository, exact tag', () => {
      assert.ok(imageAllowed(allowed, 'nvcr.io/nvidia/pytorch:24.05-py3'))
      assert.ok(!imageAllowed(allowed, 'nvcr.io/nvidia/pytorch-evil:1'))
      assert.ok(imageAllowed(allowed, 'ghcr.io/acme/infer'))
      assert.ok(imageAllowed(allowed, 'ghcr.io/acme/infer:v2'))
      assert.ok(imageAllowed(allowed, `ghcr.io/acme/infer@sha256:${DIGEST}`))
      assert.ok(!imageAllowed(allowed, 'ghcr.io/acme/infer-other:v2'))
      assert.ok(imageAllowed(allowed, 'python:3.12-slim'))
      assert.ok(!imageAllowed(allowed, 'python:3.11'))
      assert.ok(!imageAllowed([], 'python:3.12-slim'))
    })
  })
})

describe('capability/windows', () => {
  // 2024-01-01 is a Monday
  const MON = '2024-01-01'

  describe('parseWindow', () => {
    it('reads days, ranges and times', () => {
      assert.deepEqual(parseWindow('always'), { days: 0x7f, startMinute: 0, endMinute: 1440 })
      assert.deepEqual(parseWindow('mon-fri 19:00-07:00'), { days: 0x1f, startMinute: 1140, endMinute: 420 })
      assert.deepEqual(parseWindow('Sat-Sun 00:00-24:00'), { days: 0x60, startMinute: 0, endMinute: 1440 })
      assert.deepEqual(parseWindow('weekends'), { days: 0x60, startMinute: 0, endMinute: 1440 })
      assert.deepEqual(parseWindow('weekdays 9:00-17:30'), { days: 0x1f, startMinute: 540, endMinute: 1050 })
      assert.deepEqual(parseWindow('fri-mon 22:00-06:00'), { days: 0b1110001, startMinute: 1320, endMinute: 360 })
      assert.deepEqual(parseWindow('mon+wed+friday 18:00-00:00'), { days: 0b10101, startMinute: 1080, endMinute: 1440 })
      assert.deepEqual(parseWindow('22:00-06:00'), { days: 0x7f, startMinute: 1320, endMinute: 360 })
      assert.deepEqual(parseWindow('  sun   12:00-13:00 '), { days: 0x40, startMinute: 720, endMinute: 780 })
    })

    it('formatWindow round-trips', () => {
      for (const s of ['always', 'mon-fri 19:00-07:00', 'sat-sun 00:00-24:00', 'mon+wed 09:00-17:00', 'daily 22:00-06:00', 'tue-thu+sun 01:00-02:00']) {
        assert.equal(formatWindow(parseWindow(s)), s)
        assert.deepEqual(parseWindow(formatWindow(parseWindow(s))), parseWindow(s))
      }
    })

    it('rejects bad windows naming the field', () => {
      for (const s of ['', 'never', 'mon-fry 10:00-11:00', 'mon 25:00-26:00', 'mon 10:00-10:00', 'mon 24:00-05:00',
        'mon 10:60-11:00', 'mon 10-11', 'mon tue 10:00-11:00', 'mon-tue-wed 10:00-11:00', 'mon 10:00-11:00-12:00', 'mon 00:00-00:00']) {
        assert.throws(() => parseWindow(s, 'w'), configError('w'), s)
      }
      assert.throws(() => parseWindows(['always', 'nope'], 'x.windows'), configError('x.windows[1]'))
    })
  })

  describe('isAvailable', () => {
    const nights = ['mon-fri 19:00-07:00']

    it('overnight windows belong to the start day', () => {
      assert.equal(isAvailable(nights, 'UTC', utc(`${MON}T18:59:59`)), false)
      assert.equal(isAvailable(nights, 'UTC', utc(`${MON}T19:00:00`)), true)
      assert.equal(isAvailable(nights, 'UTC', utc('2024-01-02T06:59:59')), true)
      assert.equal(isAvailable(nights, 'UTC', utc('2024-01-02T07:00:00')), false)
      // Friday night runs into Saturday morning
      assert.equal(isAvailable(nights, 'UTC', utc('2024-01-06T03:00:00')), true)
      assert.equal(isAvailable(nights, 'UTC', utc('2024-01-06T07:00:00')), false)
      // Monday early morning belongs to Sunday night, which is not listed
      assert.equal(isAvailable(nights, 'UTC', utc('2024-01-08T03:00:00')), false)
      // Sunday night wraps into Monday
      assert.equal(isAvailable(['sun 22:00-06:00'], 'UTC', utc('2024-01-08T05:59:00')), true)
      assert.equal(isAvailable(['sun 22:00-06:00'], 'UTC', utc('2024-01-08T06:00:00')), false)
    })

    it('weekends and always', () => {
      const weekend = ['sat-sun 00:00-24:00']
      assert.equal(isAvailable(weekend, 'UTC', utc('2024-01-05T23:59:00')), false)
      assert.equal(isAvailable(weekend, 'UTC', utc('2024-01-06T00:00:00')), true)
      assert.equal(isAvailable(weekend, 'UTC', utc('2024-01-07T23:59:59')), true)
      assert.equal(isAvailable(weekend, 'UTC', utc('2024-01-08T00:00:00')), false)
      assert.equal(isAvailable(['always'], 'Asia/Kolkata', utc('2024-01-03T12:34:00')), true)
      assert.equal(isAvailable(parseWindows(['weekends']), 'UTC', utc('2024-01-06T12:00:00')), true)
    })

    it('follows the time zone (Europe/Berlin vs UTC)', () => {
      const office = ['mon-fri 09:00-17:00']
      // 08:30 UTC is 09:30 in Berlin (UTC+1 in January)
      assert.equal(isAvailable(office, 'Europe/Berlin', utc(`${MON}T08:30:00`)), true)
      assert.equal(isAvailable(office, 'UTC', utc(`${MON}T08:30:00`)), false)
      // 16:30 UTC is 17:30 in Berlin
      assert.equal(isAvailable(office, 'Europe/Berlin', utc(`${MON}T16:30:00`)), false)
      assert.equal(isAvailable(office, 'UTC', utc(`${MON}T16:30:00`)), true)
      // in July Berlin is UTC+2
      assert.equal(isAvailable(office, 'Europe/Berlin', utc('2024-07-01T07:00:00')), true)
      // Saturday 23:30 UTC is Sunday 08:30 in Tokyo (UTC+9): the weekday follows the zone
      assert.equal(isAvailable(['sun'], 'Asia/Tokyo', utc('2024-01-06T23:30:00')), true)
      assert.equal(isAvailable(['sun'], 'UTC', utc('2024-01-06T23:30:00')), false)
      assert.equal(localWeekMinute('America/New_York', utc(`${MON}T03:00:00`)), 6 * 1440 + 22 * 60)
    })
  })

  describe('nextChange', () => {
    const nights = ['mon-fri 19:00-07:00']
    it('finds the next opening and closing', () => {
      assert.equal(nextChange(nights, 'UTC', utc(`${MON}T12:00:00`)), utc(`${MON}T19:00:00`))
      assert.equal(nextChange(nights, 'UTC', utc(`${MON}T12:00:30.5`)), utc(`${MON}T19:00:00`))
      assert.equal(nextChange(nights, 'UTC', utc(`${MON}T20:00:00`)), utc('2024-01-02T07:00:00'))
      assert.equal(nextChange(nights, 'UTC', utc('2024-01-05T20:00:00')), utc('2024-01-06T07:00:00'))
      // Saturday morning: closed until Monday evening
      assert.equal(nextChange(nights, 'UTC', utc('2024-01-06T08:00:00')), utc('2024-01-08T19:00:00'))
      // exactly at a flip: the next one
      assert.equal(nextChange(nights, 'UTC', utc(`${MON}T19:00:00`)), utc('2024-01-02T07:00:00'))
    })

    it('in a time zone', () => {
      assert.equal(nextChange(nights, 'Europe/Berlin', utc(`${MON}T12:00:00`)), utc(`${MON}T18:00:00`))
    })

    it('merges adjacent windows', () => {
      const w = ['fri 19:00-24:00', 'sat-sun']
      assert.equal(nextChange(w, 'UTC', utc('2024-01-05T20:00:00')), utc('2024-01-08T00:00:00'))
    })

    it('null when availability never flips', () => {
      assert.equal(nextChange(['always'], 'UTC', utc(MON + 'T00:00:00')), null)
      assert.equal(nextChange(['mon-sun'], 'Europe/Berlin', utc(MON + 'T00:00:00')), null)
      assert.equal(nextChange(['mon-fri 00:00-24:00', 'sat-sun 00:00-24:00'], 'UTC', utc(MON + 'T00:00:00')), null)
    })

    it('follows DST jumps', () => {
      // Berlin, 2024-03-31: 02:00 CET jumps to 03:00 CEST (01:00 UTC)
      assert.equal(nextChange(['sun 02:30-04:00'], 'Europe/Berlin', utc('2024-03-31T00:30:00')), utc('2024-03-31T01:00:00'))
      // 2024-10-27: 03:00 CEST falls back to 02:00 CET (01:00 UTC); 02:30 happens twice
      assert.equal(nextChange(['sun 02:30-04:00'], 'Europe/Berlin', utc('2024-10-27T00:00:00')), utc('2024-10-27T00:30:00'))
      assert.equal(nextChange(['sun 02:30-04:00'], 'Europe/Berlin', utc('2024-10-27T00:30:00')), utc('2024-10-27T03:00:00'))
    })
  })

  describe('availableFor', () => {
    const nights = ['mon-fri 19:00-07:00']
    it('the whole interval must be inside', () => {
      assert.equal(availableFor(nights, 'UTC', utc(`${MON}T20:00:00`), 11 * 3_600_000), true)
      assert.equal(availableFor(nights, 'UTC', utc(`${MON}T20:00:00`), 11 * 3_600_000 + 60_000), false)
      assert.equal(availableFor(nights, 'UTC', utc(`${MON}T12:00:00`), 60_000), false)
      assert.equal(availableFor(nights, 'UTC', utc(`${MON}T18:00:00`), 2 * 3_600_000), false)
      assert.equal(availableFor(nights, 'UTC', utc(`${MON}T20:00:00`), 0), true)
    })

    it('is contiguous across adjacent windows', () => {
      const w = ['fri 19:00-24:00', 'sat-sun']
      assert.equal(availableFor(w, 'UTC', utc('2024-01-05T20:00:00'), 30 * 3_600_000), true)
      assert.equal(availableFor(w, 'UTC', utc('2024-01-05T20:00:00'), 52 * 3_600_000), true)
      assert.equal(availableFor(w, 'UTC', utc('2024-01-05T20:00:00'), 52 * 3_600_000 + 1), false)
      const gap = ['fri 19:00-24:00', 'sat 01:00-24:00']
      assert.equal(availableFor(gap, 'UTC', utc('2024-01-05T20:00:00'), 5 * 3_600_000), false)
      // the nights of Monday and Tuesday do not join: 07:00-19:00 Tuesday is closed
      assert.equal(availableFor(nights, 'UTC', utc(`${MON}T20:00:00`), 24 * 3_600_000), false)
    })

    it('across a boundary in another time zone', () => {
      // Berlin 19:00-07:00 is 18:00-06:00 UTC in January
      assert.equal(availableFor(nights, 'Europe/Berlin', utc(`${MON}T18:00:00`), 12 * 3_600_000), true)
      assert.equal(availableFor(nights, 'UTC', utc(`${MON}T18:00:00`), 12 * 3_600_000), false)
      assert.equal(availableFor(nights, 'Europe/Berlin', utc(`${MON}T18:00:00`), 12 * 3_600_000 + 60_000), false)
    })

    it('always: any length', () => {
      assert.equal(availableFor(['always'], 'UTC', utc(MON + 'T00:00:00'), 30 * 86_400_000), true)
    })
  })
})
