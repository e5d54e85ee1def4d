// What TypeScript annotations cost a run: the same realistic program (three functions over a
// 1 000-entry table, JSON.stringify, one console.log) written plain and with the annotations a
// model writes (an interface, a type alias, parameter and return types, `as`), back to back and
// interleaved, in both containments. The strip happens per run (swc), so any cost shows here.
// Usage: node bench/ts-annotations.mjs [runs=60]
import { Context } from 'cordis'
import { IsolateCodeRuntime } from '../lib/index.mjs'
import { ms, p50 } from './stats.mjs'

const RUNS = Number(process.argv[2] ?? 60)
const WARMUP = 10

const plain = `
function score(item) { return item.value * 2 + item.name.length }
function build(n) { const out = {}; for (let i = 0; i < n; i++) out['k' + i] = { name: 'item' + i, value: i }; return out }
function summarize(table) { let total = 0; for (const k in table) total += score(table[k]); return total }
const data = build(1000)
console.log('size', JSON.stringify(data).length)
return summarize(data)`

const annotated = `
interface Item { name: string; value: number }
type Table = Record<string, Item>
function score(item: Item): number { return item.value * 2 + item.name.length }
function build(n: number): Table { const out: Table = {}; for (let i = 0; i < n; i++) out['k' + i] = { name: 'item' + i, value: i }; return out }
function summarize(table: Table): number { let total: number = 0; for (const k in table) total += score(table[k] as Item); return total }
const data: Table = build(1000)
console.log('size', (JSON.stringify(data) as string).length)
return summarize(data)`

const programs = { plain, annotated }
const EXPECTED = Array.from({ length: 1000 }, (_, i) => i * 2 + `item${i}`.length).reduce((a, b) => a + b, 0)
console.log(`TypeScript annotations, ${RUNS} runs each, back to back, interleaved (p50 of wall time per run)`)
for (const containment of ['process', 'thread']) {
  const ctx = new Context()
  await ctx.plugin(IsolateCodeRuntime, { containment })
  const samples = { plain: [], annotated: [] }
  for (let i = 0; i < RUNS + WARMUP; i++) {
    const order = i % 2 ? ['plain', 'annotated'] : ['annotated', 'plain']
    for (const name of order) {
      const started = performance.now()
      const result = await ctx.codeRuntime.run({ program: programs[name], bindings: [] })
      const took = performance.now() - started
      // Checked, so that a program that failed fast never reads as a fast one.
      if (result.value !== EXPECTED) throw new Error(`${name}: ${JSON.stringify(result.error ?? result.value)}`)
      if (i >= WARMUP) samples[name].push(took)
    }
  }
  const [a, b] = [p50(samples.plain), p50(samples.annotated)]
  console.log(`'${containment}'`.padEnd(10), `plain ${ms(a)}   annotated ${ms(b)}   annotated/plain ${(b / a).toFixed(2)}×`)
  ctx.registry.delete(IsolateCodeRuntime)
}
