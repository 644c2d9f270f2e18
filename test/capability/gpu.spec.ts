import * as assert from 'node:assert/strict'
import { readFileSync, chmodSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseNvidiaSmi, parseTelemetry, detectGpus, readGpuTelemetry, groupGpus, NVIDIA_SMI_NOT_FOUND } from '../../src/capability/gpu/gpu.js'
import { CapabilityError } from '../../src/capability/errors.js'
import { isCoded } from '../../src/common/index.js'
import { normaliseGpuModel, gpuModelMatches } from '../../src/capability/gpu/gpu-model.js'
import { parseSimulatedGpu, parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { ConfigError } from '../../src/config/validate.js'

const fixtureUrl = (name: string): URL => new URL(`../../../test/fixtures/nvidia-smi/${name}`, import.meta.url)
const fixture = (name: string): string => readFileSync(fixtureUrl(name), 'utf8')
const fakeSmi = fileURLToPath(fixtureUrl('fake-nvidia-smi.sh'))

function isDetectionError (match: RegExp): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.ok(isCoded(err, CapabilityError, 'ERR_GPU_DETECTION'), `expected CapabilityError ERR_GPU_DETECTION, got ${String(err)}`)
    assert.equal(err.name, 'CapabilityError')
    assert.equal(err.code, 'ERR_GPU_DETECTION')
    assert.match(err.message, match)
    return true
  }
}

function isSimError (match: RegExp): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`)
    assert.equal(err.field, 'simulateGpu')
    assert.match(err.message, match)
    return true
  }
}

describe('capability/gpu', () => {
  describe('normaliseGpuModel', () => {
    const cases: Array<[string, string]> = [
      ['NVIDIA H100 80GB HBM3', 'h100-80gb'],
      ['NVIDIA A100-SXM4-40GB', 'a100-40gb'],
      ['NVIDIA A100-PCIE-40GB', 'a100-40gb'],
      ['NVIDIA A100 80GB PCIe', 'a100-80gb'],
      ['NVIDIA GeForce RTX 4090', 'rtx-4090'],
      ['NVIDIA GeForce RTX 3090', 'rtx-3090'],
      ['Tesla T4', 't4'],
      ['Tesla V100-SXM2-16GB', 'v100-16gb'],
      ['NVIDIA L4', 'l4'],
      ['NVIDIA L40S', 'l40s'],
      ['NVIDIA H100 PCIe', 'h100'],
      ['NVIDIA RTX 6000 Ada Generation', 'rtx-6000-ada'],
      ['  nvidia   h100  80 GB  ', 'h100-80gb'],
      ['H100', 'h100']
    ]
    for (const [name, key] of cases) {
      it(`${JSON.stringify(name)} → ${key}`, () => { assert.equal(normaliseGpuModel(name), key) })
    }
  })

  describe('gpuModelMatches', () => {
    it('a bare model matches every memory variant', () => {
      assert.ok(gpuModelMatches('h100', 'h100-80gb'))
      assert.ok(gpuModelMatches('H100', 'h100-94gb'))
      assert.ok(gpuModelMatches('a100', 'a100-40gb'))
      assert.ok(gpuModelMatches('NVIDIA H100', 'h100'))
    })
    it('a variant matches only itself', () => {
      assert.ok(gpuModelMatches('a100-40gb', 'a100-40gb'))
      assert.ok(gpuModelMatches('A100 40GB', 'a100-40gb'))
      assert.ok(!gpuModelMatches('a100-40gb', 'a100-80gb'))
      assert.ok(!gpuModelMatches('h100-80gb', 'h100'))
    })
    it('ignores case, spaces and dashes', () => {
      assert.ok(gpuModelMatches('RTX4090', 'rtx-4090'))
      assert.ok(gpuModelMatches('rtx 4090', 'rtx-4090'))
      assert.ok(gpuModelMatches('GeForce RTX-4090', 'rtx-4090'))
      assert.ok(gpuModelMatches('rtx-4090', 'rtx4090'))
    })
    it('does not match on a partial token', () => {
      assert.ok(!gpuModelMatches('l4', 'l40s'))
      assert.ok(!gpuModelMatches('l40', 'l4'))
      assert.ok(!gpuModelMatches('h10', 'h100-80gb'))
      assert.ok(!gpuModelMatches('rtx-40', 'rtx-4090'))
      assert.ok(!gpuModelMatches('a100', 'h100-80gb'))
      assert.ok(!gpuModelMatches('', 'h100'))
    })
  })

  describe('parseNvidiaSmi fixtures', () => {
    it('one H100 80GB', () => {
      assert.deepEqual(parseNvidiaSmi(fixture('h100-80gb.csv')), [{
        index: 0,
        uuid: 'GPU-8d3f5a2e-1c4b-7e9a-b0d2-6f8e4a1c3b59',
        model: 'NVIDIA H100 80GB HBM3',
        modelKey: 'h100-80gb',
        vramMib: 81559,
        driverVersion: '550.54.15',
        computeCapability: '9.0',
        powerLimitW: 700,
        simulated: false
      }])
    })

    it('8× A100 40GB', () => {
      const gpus = parseNvidiaSmi(fixture('a100-40gb-x8.csv'))
      assert.equal(gpus.length, 8)
      assert.deepEqual(gpus.map(g => g.index), [0, 1, 2, 3, 4, 5, 6, 7])
      assert.equal(new Set(gpus.map(g => g.uuid)).size, 8)
      for (const g of gpus) {
        assert.equal(g.model, 'NVIDIA A100-SXM4-40GB')
        assert.equal(g.modelKey, 'a100-40gb')
        assert.equal(g.vramMib, 40960)
        assert.equal(g.computeCapability, '8.0')
        assert.equal(g.powerLimitW, 400)
      }
      assert.deepEqual(groupGpus(gpus), [{
        model: 'NVIDIA A100-SXM4-40GB',
        modelKey: 'a100-40gb',
        vramMib: 40960,
        count: 8,
        computeCapability: '8.0',
        driverVersion: '535.183.01',
        simulated: false
      }])
    })

    it('an RTX 4090', () => {
      const [g, ...rest] = parseNvidiaSmi(fixture('rtx-4090.csv'))
      assert.equal(rest.length, 0)
      assert.equal(g?.modelKey, 'rtx-4090')
      assert.equal(g?.vramMib, 24564)
      assert.equal(g?.computeCapability, '8.9')
      assert.equal(g?.powerLimitW, 450)
    })

    it('a mixed box', () => {
      const gpus = parseNvidiaSmi(fixture('mixed.csv'))
      assert.deepEqual(gpus.map(g => [g.index, g.modelKey, g.vramMib, g.computeCapability, g.powerLimitW]), [
        [0, 'rtx-4090', 24564, '8.9', 450],
        [1, 'rtx-3090', 24576, '8.6', 350],
        [2, 't4', 15360, '7.5', 70]
      ])
      const groups = groupGpus(gpus)
      assert.equal(groups.length, 3)
      assert.ok(groups.every(g => g.count === 1))
    })

    it('[N/A] and [Not Supported] optional fields become undefined', () => {
      const [l4, t4] = parseNvidiaSmi(fixture('na-fields.csv'))
      assert.equal(l4?.modelKey, 'l4')
      assert.equal(l4?.vramMib, 23034)
      assert.equal(l4?.computeCapability, undefined)
      assert.equal(l4?.powerLimitW, undefined)
      assert.ok(l4 != null && !('powerLimitW' in l4))
      assert.equal(t4?.computeCapability, '7.5')
      assert.equal(t4?.powerLimitW, undefined)
      assert.equal(t4?.driverVersion, '535.104.05')
    })

    it('driver failure text throws ERR_GPU_DETECTION with the driver message', () => {
      assert.throws(() => parseNvidiaSmi(fixture('driver-failure.txt')),
        isDetectionError(/driver problem: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver/))
    })
  })

  describe('parseNvidiaSmi robustness', () => {
    it('odd spacing, tabs, CRLF and blank lines', () => {
      const csv = '\n\n  0 ,GPU-aaaa,   NVIDIA  H100 80GB HBM3 ,81559,550.54.15 ,9.0,  700.00  \r\n\r\n\t1,\tGPU-bbbb , NVIDIA L4,23034 , 550.54.15, 8.9 ,72.00\n   \n'
      const gpus = parseNvidiaSmi(csv)
      assert.deepEqual(gpus.map(g => [g.index, g.uuid, g.model, g.modelKey, g.vramMib, g.powerLimitW]), [
        [0, 'GPU-aaaa', 'NVIDIA H100 80GB HBM3', 'h100-80gb', 81559, 700],
        [1, 'GPU-bbbb', 'NVIDIA L4', 'l4', 23034, 72]
      ])
    })

    it('empty output is no GPUs', () => {
      assert.deepEqual(parseNvidiaSmi(''), [])
      assert.deepEqual(parseNvidiaSmi('\n  \n'), [])
    })

    it('tolerates a header line and units', () => {
      const csv = 'index, uuid, name, memory.total [MiB], driver_version, compute_cap, power.limit [W]\n0, GPU-x, NVIDIA L4, 23034 MiB, 550.54.15, 8.9, 72.00 W\n'
      const [g] = parseNvidiaSmi(csv)
      assert.equal(g?.vramMib, 23034)
      assert.equal(g?.powerLimitW, 72)
    })

    it('missing uuid, name or memory is an error naming the line', () => {
      assert.throws(() => parseNvidiaSmi('0, GPU-a, NVIDIA L4, 23034, 550, 8.9, 72\n1, [N/A], NVIDIA L4, 23034, 550, 8.9, 72\n'),
        isDetectionError(/line 2 \(missing uuid\)/))
      assert.throws(() => parseNvidiaSmi('0, GPU-a, , 23034, 550, 8.9, 72'), isDetectionError(/line 1 \(missing name\)/))
      assert.throws(() => parseNvidiaSmi('0, GPU-a, NVIDIA L4, [N/A], 550, 8.9, 72'), isDetectionError(/memory\.total/))
      assert.throws(() => parseNvidiaSmi('x, GPU-a, NVIDIA L4, 1, 550, 8.9, 72'), isDetectionError(/bad index/))
    })

    it('bracketed per-field errors are field values, not driver failures', () => {
      const [g] = parseNvidiaSmi('0, GPU-a, NVIDIA L4, 23034, 550, [Insufficient Permissions], [GPU is lost]')
      assert.equal(g?.powerLimitW, undefined)
      assert.throws(() => parseNvidiaSmi('0, GPU-a, NVIDIA L4, [GPU is lost], 550, 8.9, 72'), isDetectionError(/line 1 .*memory\.total/))
    })

    it('wrong field count is an error', () => {
      assert.throws(() => parseNvidiaSmi('0, GPU-a, NVIDIA L4, 23034'), isDetectionError(/expected 7 comma-separated fields, got 4/))
    })

    it('duplicate index is an error', () => {
      assert.throws(() => parseNvidiaSmi('0, GPU-a, NVIDIA L4, 23034, 550, 8.9, 72\n0, GPU-b, NVIDIA L4, 23034, 550, 8.9, 72'),
        isDetectionError(/index 0 twice/))
    })

    it('other driver failure texts', () => {
      assert.throws(() => parseNvidiaSmi('No devices were found\n'), isDetectionError(/No devices were found/))
      assert.throws(() => parseNvidiaSmi('Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.54\n'),
        isDetectionError(/Failed to initialize NVML: Driver\/library version mismatch/))
    })
  })

  describe('parseTelemetry', () => {
    it('reads temperature, utilization and power draw; [N/A] is undefined', () => {
      assert.deepEqual(parseTelemetry(fixture('telemetry.csv')), [
        { index: 0, temperatureC: 34, utilizationPct: 0, powerDrawW: 24.61 },
        { index: 1, temperatureC: 71, utilizationPct: 98, powerDrawW: 318.27 },
        { index: 2 }
      ])
    })
    it('odd spacing and errors', () => {
      assert.deepEqual(parseTelemetry('\n 3 ,55,  12 ,  [N/A] \n'), [{ index: 3, temperatureC: 55, utilizationPct: 12 }])
      assert.throws(() => parseTelemetry('0, 55'), isDetectionError(/expected 4/))
      assert.throws(() => parseTelemetry(fixture('driver-failure.txt')), isDetectionError(/NVIDIA-SMI has failed/))
    })
  })

  describe('detectGpus through a child process', () => {
    before(() => {
      // git keeps the mode, but be safe on checkouts that lost it
      if ((statSync(fakeSmi).mode & 0o111) === 0) chmodSync(fakeSmi, 0o755)
    })
    const env = (fixtureName: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv =>
      ({ ...process.env, FAKE_NVIDIA_SMI_FIXTURE: fixtureName, ...extra })

    it('reads the GPUs the binary reports', async () => {
      const gpus = await detectGpus({ nvidiaSmi: fakeSmi, env: env('a100-40gb-x8') })
      assert.equal(gpus.length, 8)
      assert.ok(gpus.every(g => g.modelKey === 'a100-40gb' && !g.simulated))
      const mixed = await detectGpus({ nvidiaSmi: fakeSmi, env: env('mixed.csv') })
      assert.deepEqual(mixed.map(g => g.modelKey), ['rtx-4090', 'rtx-3090', 't4'])
    })

    it('driver failure: non-zero exit gives the driver first line', async () => {
      await assert.rejects(detectGpus({ nvidiaSmi: fakeSmi, env: env('driver-failure') }),
        isDetectionError(/failed \(exit 9\): NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver/))
    })

    it('missing binary explains how to simulate', async () => {
      await assert.rejects(detectGpus({ nvidiaSmi: '/nonexistent/idlegrid-test/nvidia-smi' }), (err: unknown) => {
        assert.ok(isCoded(err, CapabilityError, 'ERR_GPU_DETECTION'))
        assert.equal(err.message, NVIDIA_SMI_NOT_FOUND)
        assert.match(err.message, /--simulate-gpu MODEL:VRAM_GB\[:COUNT\]/)
        return true
      })
    })

    it('a hung binary is killed after timeoutMs', async () => {
      const started = Date.now()
      await assert.rejects(detectGpus({ nvidiaSmi: fakeSmi, timeoutMs: 300, env: env('h100-80gb', { FAKE_NVIDIA_SMI_SLEEP: '5' }) }),
        isDetectionError(/did not answer within 300 ms/))
      assert.ok(Date.now() - started < 4000)
    })

    it('telemetry through the binary', async () => {
      const t = await readGpuTelemetry({ nvidiaSmi: fakeSmi, env: env('mixed') })
      assert.equal(t.length, 3)
      assert.equal(t[1]?.temperatureC, 71)
    })
  })

  describe('simulated GPUs', () => {
    it('"H100:80"', () => {
      assert.deepEqual(parseSimulatedGpu('H100:80'), [{
        index: 0, uuid: 'GPU-sim-h100-0', model: 'H100', modelKey: 'h100', vramMib: 81920, simulated: true
      }])
    })
    it('"A100:40:8" gives 8 with distinct deterministic uuids', () => {
      const gpus = parseSimulatedGpu('A100:40:8')
      assert.equal(gpus.length, 8)
      assert.deepEqual(gpus.map(g => g.uuid), [0, 1, 2, 3, 4, 5, 6, 7].map(i => `GPU-sim-a100-${i}`))
      assert.ok(gpus.every(g => g.simulated && g.vramMib === 40960))
      assert.deepEqual(parseSimulatedGpu('A100:40:8'), gpus)
      assert.deepEqual(groupGpus(gpus), [{ model: 'A100', modelKey: 'a100', vramMib: 40960, count: 8, simulated: true }])
    })
    it('"RTX 4090:24", spaces and a fractional VRAM', () => {
      const [g] = parseSimulatedGpu(' RTX 4090 : 24 ')
      assert.equal(g?.modelKey, 'rtx-4090')
      assert.equal(g?.model, 'RTX 4090')
      assert.equal(g?.vramMib, 24576)
      assert.equal(parseSimulatedGpu('T4:15.5')[0]?.vramMib, 15872)
      assert.equal(parseSimulatedGpu('H100 80GB:80')[0]?.modelKey, 'h100-80gb')
    })
    it('several specs are numbered consecutively', () => {
      const gpus = parseSimulatedGpus(['H100:80:2', 'L4:24'])
      assert.deepEqual(gpus.map(g => [g.index, g.uuid]), [[0, 'GPU-sim-h100-0'], [1, 'GPU-sim-h100-1'], [2, 'GPU-sim-l4-2']])
      assert.equal(groupGpus(gpus).length, 2)
    })
    it('bad specs are ConfigErrors for simulateGpu', () => {
      assert.throws(() => parseSimulatedGpu('H100'), isSimError(/MODEL:VRAM_GB\[:COUNT\]/))
      assert.throws(() => parseSimulatedGpu(''), isSimError(/MODEL:VRAM_GB/))
      assert.throws(() => parseSimulatedGpu(':80'), isSimError(/MODEL/))
      assert.throws(() => parseSimulatedGpu('H100:0'), isSimError(/VRAM_GB/))
      assert.throws(() => parseSimulatedGpu('H100:-8'), isSimError(/VRAM_GB/))
      assert.throws(() => parseSimulatedGpu('H100:lots'), isSimError(/VRAM_GB/))
      assert.throws(() => parseSimulatedGpu('H100:80:0'), isSimError(/COUNT/))
      assert.throws(() => parseSimulatedGpu('H100:80:1.5'), isSimError(/COUNT/))
      assert.throws(() => parseSimulatedGpu('H100:80:1000'), isSimError(/COUNT/))
      assert.throws(() => parseSimulatedGpu('H100:80:2:x'), isSimError(/MODEL:VRAM_GB/))
      assert.throws(() => parseSimulatedGpu('H100 80GB:40'), isSimError(/80 GB but VRAM_GB is 40/))
      assert.throws(() => parseSimulatedGpu('NVIDIA:80'), isSimError(/names no GPU/))
      assert.throws(() => parseSimulatedGpu('H100;rm -rf:80'), isSimError(/MODEL/))
    })
    it('simulated records are matched like real ones', () => {
      const [g] = parseSimulatedGpu('H100:80')
      assert.ok(g != null && gpuModelMatches('h100', g.modelKey))
    })
  })
})
