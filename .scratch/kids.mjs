import { Context } from 'cordis'
import { PythonCodeRuntime } from '/work/wt-python/lib/index.mjs'
const ctx = new Context()
await ctx.plugin(PythonCodeRuntime, { pythonBin: '/root/.pyenv/versions/3.11.7/bin/python3', cpuSeconds: 1, graceMs: 300 })
const R = ctx.get('codeRuntime')
const program = `
import subprocess, sys, resource
p = subprocess.run([sys.executable, "-c", "while True: pass"])
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(p.returncode, me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, resource.getrlimit(resource.RLIMIT_CPU))
return "returned"`
const rs = await Promise.all(Array.from({ length: 4 }, () => R.run({ program, bindings: [] })))
for (const r of rs) console.log(JSON.stringify(r))
