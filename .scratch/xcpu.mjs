import { Context } from 'cordis'
import { PythonCodeRuntime } from '/work/wt-python/lib/index.mjs'
const ctx = new Context()
await ctx.plugin(PythonCodeRuntime, { pythonBin: '/root/.pyenv/versions/3.11.7/bin/python3', cpuSeconds: 1 })
const r = await ctx.codeRuntime.run({ program: `
import signal, resource, time
hit = []
signal.signal(signal.SIGXCPU, lambda *a: hit.append(time.process_time()))
while not hit:
    pass
me = resource.getrusage(resource.RUSAGE_SELF)
print(hit, me.ru_utime + me.ru_stime, resource.getrlimit(resource.RLIMIT_CPU), time.process_time())
return "survived"`, bindings: [] })
console.log(JSON.stringify(r))
