import { Context } from 'cordis'
import { PythonCodeRuntime } from '/work/wt-python/lib/index.mjs'
const ctx = new Context()
const t0 = Date.now()
const fiber = await ctx.plugin(PythonCodeRuntime, {})
console.log('loaded in', Date.now() - t0, ctx.codeRuntime.language, ctx.codeRuntime.isolation, ctx.codeRuntime.interpreter)
const R = ctx.codeRuntime
const tools = { global: 'tools', errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' }, functions: {
  echo: async (a) => a, fail: async () => { throw new Error('denied') }, big: async () => 2**60 } }
for (const program of [
  'return 1',
  'print("hello", "world")\nreturn {"a": [1, 2.5, None, True]}',
  'x = await tools.echo({"k": [1, "é\\ud800"]})\nreturn x',
  'try:\n    await tools.fail({})\nexcept ToolCallError as e:\n    return [e.toolName, str(e)]',
  'return await tools.big({})',
  'raise ValueError("boom")',
  'x = = 1',
  'import os\nos._exit(3)',
  'return (1, 2)',
  'import sys\nreturn [sys.modules["__main__"].__file__, sys.executable, dict(__import__("os").environ)]',
]) {
  const t = Date.now()
  const r = await R.run({ program, bindings: [tools] })
  console.log(Date.now() - t, 'ms', JSON.stringify(r))
}
await fiber.dispose()
console.log('disposed', ctx.get('codeRuntime'))
