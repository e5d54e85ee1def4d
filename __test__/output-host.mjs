// A host process for __test__/output-multiply.test.mjs: one runtime, one program that prints
// its whole output budget in a given pattern, and what that cost the host: the growth of its
// peak resident memory over what it held before the run, and the longest turn of its event loop
// while the run was in flight. `node output-host.mjs <containment> <budget bytes> <pattern>
// <stream|whole>`; one JSON line on stdout.
import fs from 'node:fs'
import { Context } from 'cordis'
import { IsolateCodeRuntime } from '../lib/index.mjs'

const [containment, budgetText, pattern, mode] = process.argv.slice(2)
const budget = Number(budgetText)
const PATTERNS = {
  'one-byte': "for (;;) process.stdout.write('x')",
  'two-byte': "for (;;) process.stdout.write('€')",
  // No entry equal to the one before it (they share strings through the table of recent ones,
  // src/boundary/logs.rs).
  alternating: "for (let i = 0; ; i++) process.stdout.write(i & 1 ? '€' : '₤')",
  // 20 000 different two-byte characters in turn: almost none can share a string.
  distinct: "for (let i = 0; ; i++) process.stdout.write(String.fromCharCode(0x4e00 + (i % 20000)))",
  whole: `process.stdout.write('x'.repeat(${budget} + 10))`,
}

const status = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) * 1024

const ctx = new Context()
const fiber = await ctx.plugin(IsolateCodeRuntime, { containment, maxOutputBytes: budget, computeMs: 120_000 })
const runtime = ctx.get('codeRuntime')
let streamed = 0
const onLog = mode === 'stream' ? () => streamed++ : undefined
// The same pattern at a small scale first, so the host's own code paths are warm.
await runtime.run({ program: PATTERNS[pattern].replace('for (;;)', 'for (let i = 0; i < 5000; i++)'), bindings: [], onLog })
globalThis.gc?.()
streamed = 0
// Resets the peak (VmHWM) to the current resident size.
fs.writeFileSync('/proc/self/clear_refs', '5')
const before = status('VmRSS')
let longest = 0
let last = performance.now()
let running = true
const turn = () => {
  const now = performance.now()
  longest = Math.max(longest, now - last)
  last = now
  if (running) setImmediate(turn)
}
setImmediate(turn)
const result = await runtime.run({ program: PATTERNS[pattern], bindings: [], onLog })
running = false
const peakGrowth = status('VmHWM') - before
const entries = result.logs.length
const bytes = Buffer.byteLength(JSON.stringify(result.logs))
await fiber.dispose()
process.stdout.write(`${JSON.stringify({ containment: runtime.containment, kind: result.error?.kind, entries, bytes, streamed, peakGrowth, longestTurnMs: longest })}\n`)
process.exit(0)
