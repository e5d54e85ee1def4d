// Modules and node:vm (docs/typescript.md#modules-and-nodevm), in both containments: data: URLs of
// JavaScript load (static and dynamic imports between them), everything else stays refused, and
// node:vm runs scripts in contexts of their own under the run's budgets. Last, the host's
// workflow engine's own guest (@deepseek-ai/dsh-workflow-ptc) runs with a test host.
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IsolateCodeRuntime } from '../lib/index.mjs'
import { PROGRAM as WORKFLOW_PROGRAM } from './workflow-guest.mjs'

const js = (source) => `data:text/javascript,${encodeURIComponent(source)}`
const b64 = (source) => `data:text/javascript;base64,${Buffer.from(source).toString('base64')}`

for (const containment of ['process', 'thread']) {
  describe(`modules and node:vm (${containment})`, () => {
    let ctx
    let runtime
    beforeAll(async () => {
      ctx = new Context()
      await ctx.plugin(IsolateCodeRuntime, { containment, computeMs: 2000 })
      runtime = ctx.codeRuntime
    })
    afterAll(() => ctx.registry.delete(IsolateCodeRuntime))
    const run = (program, bindings = [], extra = {}) => runtime.run({ program, bindings, ...extra })

    it('imports a data: URL and its exports', async () => {
      const url = js('export const a = 1; export default function f(x) { return x * 2 }')
      expect((await run(`const m = await import(${JSON.stringify(url)}); return [m.a, m.default(21), Object.keys(m)]`)).value)
        .toEqual([1, 42, ['a', 'default']])
      // Cached per run by URL: the same namespace twice.
      expect((await run(`return (await import(${JSON.stringify(url)})) === (await import(${JSON.stringify(url)}))`)).value).toBe(true)
    })

    it('follows static imports between data: modules, base64 too, and top-level await', async () => {
      const leaf = b64('export const leaf = await Promise.resolve("leaf")')
      const mid = js(`import { leaf } from ${JSON.stringify(leaf)}; export const both = leaf + "+mid"`)
      expect((await run(`return (await import(${JSON.stringify(mid)})).both`)).value).toBe('leaf+mid')
      const dynamic = js(`export const inner = (await import(${JSON.stringify(js('export default 7'))})).default`)
      expect((await run(`return (await import(${JSON.stringify(dynamic)})).inner`)).value).toBe(7)
    })

    it('refuses every other specifier with the quoted specifier', async () => {
      for (const specifier of ['node:fs', 'https://example.com/x.js', './x.js', 'data:application/json,{}', 'fs']) {
        const result = await run(`await import(${JSON.stringify(specifier)})`)
        expect(result.error.message).toBe(
          `TypeError: import() is not available in this runtime: programs can load only data: URLs of JavaScript modules and node:vm (import of ${JSON.stringify(specifier)})\n    at program.ts:1:1`,
        )
      }
      // A static import of a refused specifier fails the importing module's import().
      const url = js('import { readFileSync } from "node:fs"; export default readFileSync')
      expect((await run(`try { await import(${JSON.stringify(url)}) } catch (e) { return [e.name, e.message] }`)).value)
        .toEqual(['TypeError', 'import() is not available in this runtime: programs can load only data: URLs of JavaScript modules and node:vm (import of "node:fs")'])
      // Malformed data: URLs.
      for (const [url, why] of [
        ['data:text/javascript,%E0%A4%A', 'invalid percent-encoding'],
        ['data:text/javascript,%FF', 'the module is not UTF-8'],
        ['data:text/javascript;base64,@@@', 'invalid base64'],
      ]) {
        expect((await run(`try { await import(${JSON.stringify(url)}) } catch (e) { return e.message }`)).value)
          .toBe(`import() of a malformed data: URL (${why}): ${JSON.stringify(url)}`)
      }
    })

    it('refuses a URL over the cap, quoting 100 code units', async () => {
      const result = await run("await import('data:text/javascript,' + 'x'.repeat(1 << 20))")
      expect(result.error.message).toBe(
        `TypeError: import() refused: a module's URL may have at most 1048576 characters (import of "data:text/javascript,${'x'.repeat(79)}…" (1048597 characters))\n    at program.ts:1:38`,
      )
    })

    it('a module that throws rejects its import(); syntax errors too; self-imports are cached', async () => {
      const throws = js('throw new RangeError("in module")')
      expect((await run(`try { await import(${JSON.stringify(throws)}) } catch (e) { return [e.name, e.message] }`)).value)
        .toEqual(['RangeError', 'in module'])
      const broken = js('export const = 1')
      expect((await run(`try { await import(${JSON.stringify(broken)}) } catch (e) { return e.name }`)).value).toBe('SyntaxError')
      // A module importing itself (statically and dynamically).
      const selfSource = 'export const me = 1; export const again = async (u) => (await import(u)).me'
      const self = js(selfSource)
      expect((await run(`const m = await import(${JSON.stringify(self)}); return m.again(${JSON.stringify(self)})`)).value).toBe(1)
      // A static cycle cannot be written with data: URLs (each would hold the other's URL); a
      // module that imports, at run time, a URL it was handed is cached, not loaded again.
      const counter = js('globalThis.loads = (globalThis.loads ?? 0) + 1; export const n = globalThis.loads')
      expect((await run(`const u = ${JSON.stringify(counter)}; await import(u); await import(u); const m = await import(${JSON.stringify(js('export const load = (u) => import(u)'))}); return [(await m.load(u)).n, globalThis.loads]`)).value)
        .toEqual([1, 1])
    })

    it('node:vm: globals set on the returned context are visible; the context has nothing of the runtime', async () => {
      const result = await run(`
        const vm = await import('node:vm')
        const context = vm.createContext({ seed: 2 }, { name: 'x' })
        context.double = (n) => n * 2
        const script = new vm.Script('[double(seed), typeof console, typeof tools, typeof WebAssembly, typeof setTimeout, typeof process, typeof globalThis.double]', { filename: 'w' })
        // An array of the vm realm is not lossless JSON of the program's: copied into one.
        return [vm.isContext(context), vm.isContext({}), [...script.runInContext(context)], typeof tools]
      `, [{ global: 'tools', functions: { echo: async (x) => x } }])
      expect(result.value).toEqual([true, false, [4, 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'function'], 'object'])
      // The default export and Node's named exports.
      expect((await run("const vm = await import('node:vm'); return [typeof vm.default.Script, vm.runInNewContext('a + 1', { a: 1 }), vm.runInThisContext('typeof console')]")).value)
        .toEqual(['function', 2, 'object'])
    })

    it('node:vm: a timeout ends the script, not the run', async () => {
      const result = await run(`
        const vm = await import('node:vm')
        const context = vm.createContext()
        let caught
        try { new vm.Script('while (true) {}').runInContext(context, { timeout: 50 }) } catch (e) { caught = [e.name, e.message, e.code] }
        return [caught, new vm.Script('1 + 1').runInContext(context, { timeout: 50 })]
      `)
      expect(result).toEqual({ logs: [], value: [['Error', 'Script execution timed out after 50ms', 'ERR_SCRIPT_EXECUTION_TIMEOUT'], 2] })
    })

    it("node:vm: the run's own compute budget still ends a runInContext with a larger timeout", async () => {
      const result = await run(`
        const vm = await import('node:vm')
        try { new vm.Script('while (true) {}').runInContext(vm.createContext(), { timeout: 100000 }) } catch (e) { return 'caught' }
      `)
      expect(result.error).toEqual({ kind: 'timeout', message: 'compute budget exhausted (2000ms busy) at program.ts:3:48' })
      expect((await run('return 1')).value).toBe(1)
    })

    it("node:vm: an error in the script is placed at the script's own line and column", async () => {
      const result = await run(`
        const vm = await import('node:vm')
        const script = new vm.Script('(async () => {\\nconst a = 1\\n  null.boom\\n})()', { filename: 'workflow:demo', lineOffset: -1 })
        try { await script.runInContext(vm.createContext()) } catch (e) { return [e.name, e.stack.split('\\n')[1]] }
      `)
      expect(result.value).toEqual(['TypeError', '    at workflow:demo:2:8'])
    })

    it('node:vm gives a script nothing the program did not have', async () => {
      // A function of the program's realm reaches the program's own Function, which reaches the
      // program's own global: the program's scope, never the host's (no require, no process
      // beyond the runtime's).
      const result = await run(`
        const vm = await import('node:vm')
        const context = vm.createContext()
        context.f = () => 1
        return [...new vm.Script("const g = f.constructor('return globalThis')(); [typeof g.require, typeof g.tools, typeof g.console, g === globalThis]").runInContext(context)]
      `)
      expect(result.value).toEqual(['undefined', 'undefined', 'object', false])
      // A vm context cannot load modules.
      const inside = await run(`
        const vm = await import('node:vm')
        try { await vm.runInNewContext('import("node:vm")') } catch (e) { return e.message }
      `)
      expect(inside.value).toBe('import() is not available in a node:vm context (import of "node:vm")')
    })

    describe("the host's workflow guest (@deepseek-ai/dsh-workflow-ptc@0.1.6-alpha.1)", () => {
      const limits = { maxConcurrentAgents: 4, maxTotalAgents: 10, maxItemsPerCall: 10, syncTimeoutMs: 1000 }
      function host(body, children = {}) {
        const progress = []
        const started = []
        const disposed = []
        let next = 0
        const functions = {
          begin: async () => ({ meta: { name: 'demo', description: 'd' }, body, args: { n: 3 }, limits }),
          progress: async (batch) => {
            progress.push(...batch)
            return null
          },
          startChild: async (request) => {
            started.push(request)
            next += 1
            return { callId: next, childId: `child-${next}` }
          },
          childResult: async ({ callId }) => ({
            stopReason: 'completed',
            output: [{ type: 'text', text: children[started[callId - 1].prompt] ?? `done ${callId}` }],
          }),
          disposeChild: async ({ callId }) => {
            disposed.push(callId)
            return null
          },
        }
        return { bindings: [{ global: 'workflowHost', functions }], progress, started, disposed }
      }

      it('runs a script that returns a value', async () => {
        const h = host('log("hello"); return { sum: args.n + 1 }')
        const result = await run(WORKFLOW_PROGRAM, h.bindings)
        expect(result).toEqual({ logs: [], value: { value: { sum: 4 }, stopReason: 'completed', agentsStarted: 0 } })
        expect(h.progress).toEqual([{ type: 'log', message: 'hello' }])
      })

      it('starts agent() children in parallel and gets their results', async () => {
        const h = host('phase("fan"); const r = await parallel([() => agent("one"), () => agent("two")]); return r', { one: 'ONE', two: 'TWO' })
        const result = await run(WORKFLOW_PROGRAM, h.bindings)
        expect(result).toEqual({ logs: [], value: { value: ['ONE', 'TWO'], stopReason: 'completed', agentsStarted: 2 } })
        expect(h.started.map((r) => r.prompt)).toEqual(['one', 'two'])
        expect(h.disposed.sort()).toEqual([1, 2])
        expect(h.progress.filter((e) => e.type === 'agent-end').map((e) => e.info.outcome)).toEqual(['completed', 'completed'])
      })

      it("reports a script's error at the script's own line and column", async () => {
        const h = host('const a = 1\nconst b = 2\n   undefinedThing()\nreturn a + b')
        const result = await run(WORKFLOW_PROGRAM, h.bindings)
        expect(result.value.stopReason).toBe('error')
        expect(result.value.error).toMatch(/^ReferenceError: undefinedThing is not defined\n {4}at workflow:demo:3:4/)
      })

      it('a synchronous loop in the script ends at syncTimeoutMs, the run goes on', async () => {
        const h = host('while (true) {}')
        const result = await run(WORKFLOW_PROGRAM, h.bindings)
        expect(result.value).toMatchObject({ stopReason: 'error', agentsStarted: 0 })
        expect(result.value.error).toMatch(/^Error: Script execution timed out after 1000ms/)
      })

      it('is cancelled mid-run by the signal', async () => {
        const h = host('await agent("never")')
        h.bindings[0].functions.childResult = () => new Promise(() => {})
        const controller = new AbortController()
        setTimeout(() => controller.abort(), 200)
        const result = await run(WORKFLOW_PROGRAM, h.bindings, { signal: controller.signal })
        expect(result.error.kind).toBe('abort')
        expect((await run('return 1')).value).toBe(1)
      })
    })
  })
}
