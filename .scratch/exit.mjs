import { Context } from 'cordis'
import { PythonCodeRuntime } from '/work/wt-python/lib/index.mjs'
const ctx = new Context()
await ctx.plugin(PythonCodeRuntime, { pythonBin: '/root/.pyenv/versions/3.11.7/bin/python3' })
ctx.get('codeRuntime').run({ program: 'import time\nprint("crn-exit-marker")\ntime.sleep(30)', bindings: [] })
setTimeout(() => process.exit(0), 500)
