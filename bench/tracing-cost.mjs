// What tracing costs (docs/tracing.md): the binding round trip and a cold run with a realistic
// number of calls, interleaved in one process, for a runtime with nobody subscribed, one whose
// runs and calls a diagnostics-channel subscriber sees, and one with an OpenTelemetry tracer
// (the real SDK, spans kept in memory). OpenTelemetry's AsyncLocalStorage context manager is
// enabled for all three, as in a host that traces. Prints medians and ratios against the first.
// Usage: node bench/tracing-cost.mjs [rounds=30] [moduleUnderTest=../lib/index.mjs]
import dc from 'node:diagnostics_channel'
import { pathToFileURL } from 'node:url'
import path from 'node:path'
import { context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { Context } from 'cordis'
import { p50 } from './stats.mjs'

const ROUNDS = Number(process.argv[2] ?? 30)
const under = process.argv[3] ? pathToFileURL(path.resolve(process.argv[3])).href : '../lib/index.mjs'
const { IsolateCodeRuntime } = await import(under)

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
const exporter = new InMemorySpanExporter()
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('bench')

async function runtime(config) {
  const ctx = new Context()
  await ctx.plugin(IsolateCodeRuntime, config)
  return ctx.codeRuntime
}

const bindings = [{ global: 'tools', functions: { noop: async () => null, search: async ({ q }) => ({ q, hits: [1, 2, 3] }) } }]
// 1 000 sequential round trips after 200 to warm up, timed inside the program.
const roundTrip =
  'for (let i = 0; i < 200; i++) await tools.noop({}); const t = performance.now(); for (let i = 0; i < 1000; i++) await tools.noop({}); return (performance.now() - t) / 1000'
// A run an agent sends: a few searches, some of them together.
const agentRun = "const a = await tools.search({ q: 'x' }); const more = await Promise.all([tools.search({ q: 'y' }), tools.search({ q: 'z' })]); return [a, ...more].length"

const subscribers = { start() {}, end() {}, asyncStart() {}, asyncEnd() {}, error() {} }
const variants = {
  'nobody subscribed': { config: {}, setup() {}, teardown() {} },
  'diagnostics subscriber': {
    config: {},
    setup() {
      dc.tracingChannel('code-runtime-native:run').subscribe(subscribers)
      dc.tracingChannel('code-runtime-native:binding').subscribe(subscribers)
    },
    teardown() {
      dc.tracingChannel('code-runtime-native:run').unsubscribe(subscribers)
      dc.tracingChannel('code-runtime-native:binding').unsubscribe(subscribers)
    },
  },
  'OpenTelemetry tracer': { config: { tracer }, setup() {}, teardown() { exporter.reset() } },
}
for (const v of Object.values(variants)) v.runtime = await runtime(v.config)

const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, { roundTrip: [], agentRun: [] }]))
for (let round = 0; round < ROUNDS + 3; round++) {
  for (const [name, v] of Object.entries(variants)) {
    v.setup()
    // Paced: the agent run finds its sandbox process ready, as a host's next step does.
    await new Promise((r) => setTimeout(r, 20))
    const t = performance.now()
    const agent = await v.runtime.run({ program: agentRun, bindings })
    const took = performance.now() - t
    const rt = await v.runtime.run({ program: roundTrip, bindings })
    v.teardown()
    if (rt.error || agent.error) throw new Error(JSON.stringify(rt.error ?? agent.error))
    if (round >= 3) {
      samples[name].roundTrip.push(rt.value * 1000)
      samples[name].agentRun.push(took)
    }
  }
}
const base = samples['nobody subscribed']
for (const [name, s] of Object.entries(samples)) {
  const rt = p50(s.roundTrip)
  const run = p50(s.agentRun)
  console.log(`${name.padEnd(24)} round trip p50 ${rt.toFixed(1)} µs (${(rt / p50(base.roundTrip)).toFixed(2)}×)  agent run p50 ${run.toFixed(2)} ms (${(run / p50(base.agentRun)).toFixed(2)}×)`)
}
process.exit(0)
