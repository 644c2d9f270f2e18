/**
 * The .proto files are the wire layouts of protocols/README.md for every implementation, so
 * they must compile with the standard compiler (protoc), not only with protons; and the
 * committed generated codecs must be what protons makes of them today.
 */
import * as assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { tempDir } from '../utils/index.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const PROTOCOLS = join(ROOT, 'protocols')
const INCLUDE = join(PROTOCOLS, 'include')
const PROTO_FILES = readdirSync(PROTOCOLS).filter(f => f.endsWith('.proto')).sort()

function protocAvailable (): boolean {
  const r = spawnSync('protoc', ['--version'], { encoding: 'utf8' })
  return r.status === 0
}

/** protoc over `files` in `dir`, with the protons option declaration on the include path */
function protoc (dir: string, files: string[]): { status: number | null, stderr: string } {
  const r = spawnSync('protoc', [`--proto_path=${dir}`, `--proto_path=${INCLUDE}`, '--descriptor_set_out=/dev/null', ...files.map(f => join(dir, f))], { encoding: 'utf8' })
  return { status: r.status, stderr: r.stderr }
}

describe('protocols: .proto files compile with protoc and protons', function () {
  this.timeout(60_000)

  it('finds the wire files', () => {
    assert.ok(PROTO_FILES.includes('envelope.proto') && PROTO_FILES.length >= 6, `found ${PROTO_FILES.join(', ')}`)
  })

  it('protoc compiles every .proto file without an error', function () {
    if (!protocAvailable()) {
      console.log('      skipped: protoc is not installed here (Debian: apt-get install protobuf-compiler; .ci/run installs it)')
      this.skip()
    }
    const { status, stderr } = protoc(PROTOCOLS, PROTO_FILES)
    assert.equal(status, 0, `protoc failed (google/protobuf/descriptor.proto comes with Debian libprotobuf-dev):\n${stderr}`)
  })

  it('protoc does fail on an option nobody declared (the check above can fail)', async function () {
    if (!protocAvailable()) this.skip()
    const dir = await tempDir('protoc-')
    try {
      writeFileSync(join(dir.path, 'bad.proto'), 'syntax = "proto3";\nmessage M { repeated uint32 x = 1 [(nobody.options).limit = 2]; }\n')
      const { status, stderr } = protoc(dir.path, ['bad.proto'])
      assert.notEqual(status, 0)
      assert.match(stderr, /unknown/)
    } finally {
      await dir.cleanup()
    }
  })

  it('the protons option declaration is the one protons ships, byte for byte', () => {
    const ours = readFileSync(join(INCLUDE, 'protons.proto'), 'utf8')
    const shipped = readFileSync(join(ROOT, 'node_modules', 'protons-runtime', 'protons.proto'), 'utf8')
    assert.ok(ours.endsWith(shipped), 'protocols/include/protons.proto must end with protons-runtime/protons.proto unchanged')
  })

  it('every file that uses (protons.options) imports its declaration weakly, and only those', () => {
    for (const file of PROTO_FILES) {
      const text = readFileSync(join(PROTOCOLS, file), 'utf8')
      const uses = text.includes('(protons.options)')
      const imports = /^import weak "protons\.proto";$/m.test(text)
      assert.equal(imports, uses, `${file}: ${uses ? 'uses (protons.options) without' : 'has an unused'} import weak "protons.proto"`)
      assert.doesNotMatch(text, /^import "protons\.proto";$/m, `${file}: a plain import makes protons generate code for the option itself`)
    }
  })

  it('protons (with npm run generate\'s empty-bytes step) regenerates exactly the committed codecs from the .proto files', async () => {
    const dir = await tempDir('protons-')
    try {
      for (const file of PROTO_FILES) copyFileSync(join(PROTOCOLS, file), join(dir.path, file))
      const bin = join(ROOT, 'node_modules', '.bin', 'protons')
      const r = spawnSync(process.execPath, [bin, ...PROTO_FILES.map(f => join(dir.path, f))], { encoding: 'utf8' })
      assert.equal(r.status, 0, `protons failed:\n${r.stderr}${r.stdout}`)
      // npm run generate's second step, as it runs there
      const post = spawnSync(process.execPath, [join(ROOT, 'scripts', 'protons-empty-bytes.mjs'), ...PROTO_FILES.map(f => join(dir.path, f.replace(/\.proto$/, '.ts')))], { encoding: 'utf8' })
      assert.equal(post.status, 0, `protons-empty-bytes failed:\n${post.stderr}${post.stdout}`)
      for (const file of PROTO_FILES) {
        const ts = file.replace(/\.proto$/, '.ts')
        assert.equal(readFileSync(join(dir.path, ts), 'utf8'), readFileSync(join(PROTOCOLS, ts), 'utf8'), `protocols/${ts} is not what protons generates from protocols/${file}: run npm run generate`)
      }
    } finally {
      await dir.cleanup()
    }
  })
})
