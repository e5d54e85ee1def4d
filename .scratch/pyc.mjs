import { Context } from 'cordis'
import { PythonCodeRuntime } from '/work/wt-python/lib/index.mjs'
const ctx = new Context()
await ctx.plugin(PythonCodeRuntime, { pythonBin: '/root/.pyenv/versions/3.11.7/bin/python3' })
const r = await ctx.get('codeRuntime').run({ program: 'import sys, os\nd = os.path.dirname(sys.modules["__main__"].__file__)\nreturn [sorted(os.listdir(d)), sorted(os.listdir(os.path.join(d, "__pycache__")))]', bindings: [] })
console.log(JSON.stringify(r))
