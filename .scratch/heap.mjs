import v8 from 'node:v8'
import { Context } from 'cordis'
import { PythonCodeRuntime } from '/work/wt-python/lib/index.mjs'
import { pythonFrameCap } from '/work/wt-python/lib/python-runtime.mjs'
const PY = '/root/.pyenv/versions/3.11.7/bin/python3'
const cap = pythonFrameCap()
const result = { cap, heap: v8.getHeapStatistics().heap_size_limit }
try {
  await new Context().plugin(PythonCodeRuntime, { pythonBin: PY, maxValueBytes: 50 * 2 ** 20, addressSpaceMb: 1024 })
} catch (e) { result.refused = e.message }
console.log(result)
const ctx = new Context()
const fiber = await ctx.plugin(PythonCodeRuntime, { pythonBin: PY, maxValueBytes: cap - 64, addressSpaceMb: 1024 })
const n = Math.floor((cap - 65) / 17)
const t = Date.now()
const r = await ctx.codeRuntime.run({ program: 'return {("k%011d" % i): 0 for i in range(' + n + ')}', bindings: [] })
result.keys = r.error ? r.error : Object.keys(r.value).length
result.n = n
result.ms = Date.now() - t
await fiber.dispose()
console.log(JSON.stringify(result))
