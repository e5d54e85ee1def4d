// Console formatting: 10 000 console.log calls of a mixed object inside the isolate (formatting
// and capture through the output ledger, timed in the program), next to the same calls through
// Node's util.formatWithOptions into an array. Target: within 2× of Node.
// Usage: node bench/console.mjs [calls=10000]
import { formatWithOptions } from 'node:util'
import { Context } from 'cordis'
import { IsolateCodeRuntime } from '../lib/index.mjs'
import { ms } from './stats.mjs'

const CALLS = Number(process.argv[2] ?? 10000)
const OPTIONS = { depth: 4, maxArrayLength: 100, maxStringLength: 10000, breakLength: 80 }
const MAKE = `(i) => ({ id: i, name: 'item ' + i, tags: ['a', 'b', 'c'], nested: { ok: i % 2 === 0, ratio: i / 7, list: [1, 2, 3] }, when: null })`

const ctx = new Context()
await ctx.plugin(IsolateCodeRuntime)
const program = `
  const make = ${MAKE}
  for (let i = 0; i < 500; i++) console.log('warm', make(i))
  const start = performance.now()
  for (let i = 0; i < ${CALLS}; i++) console.log('row %d:', i, make(i))
  return performance.now() - start`
const best = (xs) => Math.min(...xs)
const isolateTimes = []
let sample
for (let round = 0; round < 5; round++) {
  const result = await ctx.codeRuntime.run({ program, bindings: [] })
  if (result.error) throw new Error(JSON.stringify(result.error))
  isolateTimes.push(result.value)
  sample = result.logs.at(-1)
}

const make = new Function(`return ${MAKE}`)()
const nodeTimes = []
let nodeSample
for (let round = 0; round < 5; round++) {
  const out = []
  for (let i = 0; i < 500; i++) out.push(formatWithOptions(OPTIONS, 'warm', make(i)))
  const start = performance.now()
  for (let i = 0; i < CALLS; i++) out.push(formatWithOptions(OPTIONS, 'row %d:', i, make(i)))
  nodeTimes.push(performance.now() - start)
  nodeSample = out.at(-1)
}
if (sample !== nodeSample) throw new Error(`outputs differ:\n${sample}\n${nodeSample}`)
console.log(`${CALLS} console.log calls of a mixed object (best of 5)`)
console.log(`isolate (format + ledger)   ${ms(best(isolateTimes))}`)
console.log(`Node util.formatWithOptions ${ms(best(nodeTimes))}`)
console.log(`ratio isolate / Node        ${(best(isolateTimes) / best(nodeTimes)).toFixed(2)}×   (target ≤ 2×)`)
