import { Context } from 'cordis'
import { PythonCodeRuntime } from '/work/wt-python/lib/index.mjs'
const ctx = new Context()
await ctx.plugin(PythonCodeRuntime, { pythonBin: '/root/.pyenv/versions/3.11.7/bin/python3' })
const R = ctx.get('codeRuntime')
const rows = []
for (let i = 0; i < 30; i++) {
  const t0 = Date.now() / 1000
  const r = await R.run({ program: 'import time, sys\nreturn [time.time(), time.process_time()]', bindings: [] })
  const t1 = Date.now() / 1000
  rows.push([(r.value[0] - t0) * 1000, (t1 - r.value[0]) * 1000, r.value[1] * 1000])
}
rows.sort((a, b) => a[0] - b[0])
console.log('to body (ms) p50', rows[15][0].toFixed(1), ' body->resolve p50', rows.map(r => r[1]).sort((a,b)=>a-b)[15].toFixed(1), ' child cpu at body', rows.map(r => r[2]).sort((a,b)=>a-b)[15].toFixed(1))
