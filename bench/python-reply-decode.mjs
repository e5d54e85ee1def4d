// Decoding host replies in the Python child (docs/protocol.md#reply-decoding, issue 10 item 5): a
// ~50 kB reply, as the host writes it, decoded by the exact iterative decoder and by
// protocol.decode (the json C scanner where it provably agrees, the exact decoder otherwise), CPU
// time per reply inside one interpreter; then end to end, the child CPU each `await tools.blob()`
// costs the program (decode included). Benchmarks print; they assert nothing.
//
//   node bench/python-reply-decode.mjs [replies=200]
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Context } from 'cordis'
import { PythonCodeRuntime } from '../lib/index.mjs'
import { PY_DIR } from '../lib/python-runtime.mjs'
import { exactDigits, losslessJson } from '../lib/lossless.mjs'
import { ms, p50, p99 } from './stats.mjs'

const REPLIES = Number(process.argv[2] ?? 200)
const python = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim()

// Records of the kind a tool returns: ints, floats, short strings (some non-ASCII), bools, lists.
const value = Array.from({ length: 560 }, (_, i) => ({
  id: i,
  name: `item-${i}`,
  tags: ['alpha', i % 3 ? 'beta' : 'γάμμα'],
  score: i / 7,
  ok: i % 2 === 0,
}))
const frame = `{"type":"reply","id":0,"ok":true,"value":${losslessJson(value, exactDigits)}}`
console.log(`reply frame: ${Buffer.byteLength(frame)} bytes; ${REPLIES} decodes each; python ${python}`)

// 1. Both decoders on the same line, in one interpreter.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crn-bench-decode-'))
const file = path.join(dir, 'frame.json')
fs.writeFileSync(file, frame)
const micro = JSON.parse(
  execFileSync(
    python,
    [
      '-I',
      '-B',
      '-c',
      `import json, sys, time
sys.path.insert(0, ${JSON.stringify(PY_DIR)})
import protocol
line = open(${JSON.stringify(file)}, encoding="utf-8").read()
assert protocol.decode(line) == protocol.exact_decode(line)
out = {}
for name, f in (("exact decoder", protocol.exact_decode), ("protocol.decode", protocol.decode)):
    for _ in range(5):
        f(line)
    times = []
    for _ in range(${REPLIES}):
        t = time.process_time()
        f(line)
        times.append((time.process_time() - t) * 1000)
    out[name] = times
print(json.dumps(out))`,
    ],
    { encoding: 'utf8', env: { TMPDIR: os.tmpdir() } },
  ),
)
fs.rmSync(dir, { recursive: true, force: true })
for (const [name, times] of Object.entries(micro)) {
  console.log(`${name.padEnd(34)} p50 ${ms(p50(times)).padStart(10)}   p99 ${ms(p99(times)).padStart(10)}   per reply (CPU)`)
}
console.log(`speed-up at p50: ${(p50(micro['exact decoder']) / p50(micro['protocol.decode'])).toFixed(1)}x`)

// 2. End to end: the program's CPU per call (its own frame write, the reply's read and decode).
const ctx = new Context()
await ctx.plugin(PythonCodeRuntime, { pythonBin: python })
const program = `import time
for _ in range(5):
    await tools.blob(None)
times = []
for _ in range(${REPLIES}):
    t = time.process_time()
    await tools.blob(None)
    times.append((time.process_time() - t) * 1000)
return times`
const r = await ctx.codeRuntime.run({ program, bindings: [{ global: 'tools', functions: { blob: async () => value } }] })
if (r.error) throw new Error(JSON.stringify(r.error))
console.log(`${'await tools.blob() in the child'.padEnd(34)} p50 ${ms(p50(r.value)).padStart(10)}   p99 ${ms(p99(r.value)).padStart(10)}   per call (child CPU)`)
await ctx.dispose?.()
process.exit(0)
