// The bindings bridge (docs/typescript.md#bindings-bridge, and in docs/seam.md: binding
// validation, lossless JSON, namespaces and typed errors): real isolates calling real host
// JavaScript functions through threadsafe functions.
import vm from 'node:vm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isNestedNull, loadIsolate, tools } from './helpers.mjs'

let runtime
let fiber
beforeAll(async () => {
  ;({ runtime, fiber } = await loadIsolate())
})
afterAll(async () => {
  await fiber.dispose()
})

describe('binding validation rejects run()', () => {
  const reject = (bindings) => runtime.run({ program: 'return 1', bindings })
  const ns = (global, errorClass) => ({ global, functions: {}, ...(errorClass ? { errorClass } : {}) })

  it.each(['not valid!', 'await', '$tools', 'a$b', 'lambda', 'type', '_', ''])('refuses global %j', async (global) => {
    await expect(reject([ns(global)])).rejects.toThrow(
      `code-runtime-native: binding global ${JSON.stringify(global)} is not a usable identifier`,
    )
  })

  it('refuses reserved and duplicate globals', async () => {
    await expect(reject([ns('console')])).rejects.toThrow('code-runtime-native: reserved binding global "console"')
    await expect(reject([ns('__dsh_main__')])).rejects.toThrow(/reserved binding global/)
    await expect(reject([ns('tools'), ns('tools')])).rejects.toThrow('code-runtime-native: duplicate binding global "tools"')
  })

  it('refuses bad error classes', async () => {
    const ec = (name, memberNameProperty = 'm') => ({ name, memberNameProperty })
    await expect(reject([ns('tools', ec('bad name'))])).rejects.toThrow(
      'code-runtime-native: binding error class "bad name" is not a usable identifier',
    )
    await expect(reject([ns('tools', ec('console'))])).rejects.toThrow(/reserved binding global/)
    await expect(reject([ns('tools', ec('helpers')), ns('helpers')])).rejects.toThrow(
      'code-runtime-native: duplicate injected global "helpers"',
    )
    await expect(reject([ns('a', ec('E')), ns('b', ec('E'))])).rejects.toThrow(/duplicate injected global/)
    for (const member of ['', 'message', 'args', '__dict__', 'stack', 'name', '__proto__']) {
      await expect(reject([ns('tools', ec('ToolCallError', member))])).rejects.toThrow(
        `code-runtime-native: binding error member property ${JSON.stringify(member)} is not usable`,
      )
    }
  })

  it('checks every global before any error class', async () => {
    await expect(reject([ns('tools', { name: 'bad!', memberNameProperty: 'm' }), ns('$x')])).rejects.toThrow(
      'binding global "$x" is not a usable identifier',
    )
  })

  it('accepts globals spelled like built-ins and unusual member properties', async () => {
    for (const member of ['tool-name', 'code', 'constructor']) {
      const result = await runtime.run({
        program: 'return typeof ToolCallError',
        bindings: [ns('t', { name: 'ToolCallError', memberNameProperty: member })],
      })
      expect(result.value).toBe('function')
    }
    const shadow = await runtime.run({ program: 'return typeof ToolCallError', bindings: [ns('ToolCallError')] })
    expect(shadow.value).toBe('object')
    expect((await runtime.run({ program: 'return typeof Object.keys', bindings: [ns('Object')] })).value).toBe('undefined')
  })

  it('rejects misuse before looking at a pre-aborted signal', async () => {
    const signal = AbortSignal.abort('too-late')
    await expect(runtime.run({ program: '', bindings: [ns('console')], signal })).rejects.toThrow(/reserved/)
  })

  it('rejects a malformed request with a TypeError', async () => {
    await expect(runtime.run({ program: '', bindings: 42 })).rejects.toThrow(TypeError)
    await expect(runtime.run({ program: '', bindings: [{ global: 'x' }] })).rejects.toThrow(TypeError)
  })

  it('never throws synchronously', () => {
    expect(() => runtime.run(null).catch(() => {})).not.toThrow()
  })
})

describe('namespaces as the program sees them', () => {
  it('are null-prototype objects of non-writable, non-configurable enumerable callables', async () => {
    const { namespace } = tools()
    const result = await runtime.run({
      program: `const d = Object.getOwnPropertyDescriptor(tools, 'echo')
        return [Object.getPrototypeOf(tools) === null, Object.keys(tools), typeof d.value, d.writable, d.enumerable, d.configurable, Object.isFrozen(tools)]`,
      bindings: [namespace],
    })
    expect(result.value).toEqual([true, ['echo', 'fail', 'double'], 'function', false, true, false, false])
  })

  it('treat names colliding with Object.prototype as ordinary members', async () => {
    const functions = Object.create(null)
    functions.__proto__ = async () => 'proto-ok'
    functions.constructor = async () => 'ctor-ok'
    functions['my-tool'] = async () => 'dash-ok'
    const result = await runtime.run({
      program: "return [await tools['__proto__']({}), await tools['constructor']({}), typeof tools['hasOwnProperty'], await tools['my-tool']({})]",
      bindings: [{ global: 'tools', functions }],
    })
    expect(result).toEqual({ logs: [], value: ['proto-ok', 'ctor-ok', 'undefined', 'dash-ok'] })
  })

  it('snapshot the function names once, at run start', async () => {
    const functions = { a: async () => 'a' }
    const result = await runtime.run({
      program: 'return Object.keys(tools)',
      bindings: [{ global: 'tools', functions: Object.defineProperty(functions, 'hidden', { value: async () => 1 }) }],
    })
    expect(result.value).toEqual(['a'])
  })

  it('are not constructors, and ignore this and extra arguments', async () => {
    const seen = []
    const { namespace } = tools({ echo: async (...args) => (seen.push(args), args[0]) })
    const result = await runtime.run({
      program: `let constructed = false
        try { new tools.echo({}) } catch (e) { constructed = e instanceof TypeError }
        return [constructed, await tools.echo.call(null, 1), await tools.echo(1, 2, 3), await Reflect.apply(tools.echo, {}, [2])]`,
      bindings: [namespace],
    })
    expect(result.value).toEqual([true, 1, 1, 2])
    expect(seen).toEqual([[1], [1], [2]])
  })
})

describe('a call', () => {
  it('round-trips the argument and resolution exactly, calling the host once with one argument', async () => {
    const seen = []
    const { namespace, calls } = tools({ echo: async (...args) => (seen.push(args), args[0]) })
    const result = await runtime.run({ program: 'return await tools.echo({ n: 1 })', bindings: [namespace] })
    expect(result).toEqual({ logs: [], value: { n: 1 } })
    expect(calls.echo).toBe(1)
    expect(seen).toEqual([[{ n: 1 }]])
    expect(Object.getPrototypeOf(seen[0][0])).toBe(Object.prototype)
  })

  it('works end to end', async () => {
    const { namespace } = tools()
    expect(await runtime.run({
      program: "const r = await tools.double({ n: 21 }); console.log('got', r); return { doubled: r }",
      bindings: [namespace],
    })).toEqual({ logs: ['got 42'], value: { doubled: 42 } })
  })

  it('rejects lossy arguments without ever calling the host', async () => {
    const { namespace, calls } = tools()
    const result = await runtime.run({
      program: `const out = []
        const fake = Object.create(null); function O() {}; Object.defineProperty(O, 'name', { value: 'Object' }); fake.constructor = O; O.prototype = fake
        Function.prototype.toString = () => 'function Object() { [native code] }'
        const cyclic = {}; cyclic.self = cyclic
        for (const arg of [new Date(), Object.assign([1], { extra: 1 }), () => 1, { get a() { throw new Error('g') } }, -0, [1, , 2], cyclic, Object.create(fake), new Proxy({}, {}), undefined, Symbol(), 10n, NaN]) {
          try { await tools.echo(arg); out.push('resolved') } catch (e) { out.push([e instanceof ToolCallError, e.toolName, e.message]) }
        }
        try { await tools.echo() } catch (e) { out.push(e.message) }
        return out`,
      bindings: [namespace],
    })
    const typed = [true, 'echo', 'binding arguments must be lossless JSON']
    expect(result.value).toEqual([...Array(13).fill(typed), 'binding arguments must be lossless JSON'])
    expect(calls.echo).toBe(0)
  })

  it('rejects lossy resolutions with a typed error', async () => {
    const { namespace } = tools({
      bad: async () => () => 1,
      none: async () => undefined,
      date: async () => new Date(),
      getter: async () => ({ get a() { throw new Error('x') } }),
      nan: async () => NaN,
    })
    const result = await runtime.run({
      program: `const out = []
        for (const name of ['bad', 'none', 'date', 'getter', 'nan']) {
          try { await tools[name]({}); out.push('resolved') } catch (e) { out.push([e instanceof ToolCallError, e.toolName, e.message]) }
        }
        return out`,
      bindings: [namespace],
    })
    expect(result.value).toEqual(
      ['bad', 'none', 'date', 'getter', 'nan'].map((name) => [true, name, 'binding resolution must be lossless JSON']),
    )
  })

  it('accepts plain containers from another realm and sync returns', async () => {
    const { namespace } = tools({
      foreign: () => vm.runInNewContext('({ a: [1, { b: null }], c: "x" })'),
      sync: () => 5,
      thenable: () => ({ then: (resolve) => resolve('followed') }),
      nested: () => Promise.resolve(Promise.resolve('nested')),
    })
    const result = await runtime.run({
      program: 'return [await tools.foreign({}), await tools.sync({}), await tools.thenable({}), await tools.nested({})]',
      bindings: [namespace],
    })
    expect(result.value).toEqual([{ a: [1, { b: null }], c: 'x' }, 5, 'followed', 'nested'])
  })

  it('keeps an own __proto__ key in both directions', async () => {
    let received
    const { namespace } = tools({ echo: async (x) => ((received = x), x) })
    const result = await runtime.run({
      program: "const v = await tools.echo(JSON.parse('{\"__proto__\": {\"p\": 1}}')); return [Object.hasOwn(v, '__proto__'), Object.getPrototypeOf(v) === Object.prototype, v.__proto__.p]",
      bindings: [namespace],
    })
    expect(result.value).toEqual([true, true, 1])
    expect(Object.hasOwn(received, '__proto__')).toBe(true)
    expect(Object.getPrototypeOf(received)).toBe(Object.prototype)
  })

  it('echoes a 3000-deep array through a binding and back', async () => {
    let received
    const { namespace } = tools({ echo: async (x) => ((received = x), x) })
    const result = await runtime.run({
      program: 'let a = null; for (let i = 0; i < 3000; i++) a = [a]; return await tools.echo(a)',
      bindings: [namespace],
    })
    expect(isNestedNull(received, 3000)).toBe(true)
    expect(Object.keys(result)).toEqual(['logs', 'value'])
    expect(isNestedNull(result.value, 3000)).toBe(true)
  })

  it('resolves many concurrent calls out of order', async () => {
    const { namespace, calls } = tools({
      wait: ({ ms, v }) => new Promise((resolve) => setTimeout(() => resolve(v), ms)),
    })
    const result = await runtime.run({
      program: 'return await Promise.all(Array.from({ length: 100 }, (_, i) => tools.wait({ ms: (100 - i) % 13, v: i })))',
      bindings: [namespace],
    })
    expect(result.value).toEqual(Array.from({ length: 100 }, (_, i) => i))
    expect(calls.wait).toBe(100)
  })

  it('survives re-entrant calls from a getter it is snapshotting', async () => {
    const { namespace } = tools()
    const result = await runtime.run({
      program: 'let inner; const arg = { get a() { inner = tools.double({ n: 2 }); return 1 } }; const outer = await tools.echo(arg); return [outer, await inner]',
      bindings: [namespace],
    })
    expect(result.value).toEqual([{ a: 1 }, 4])
  })

  it('lets a host binding start a nested run', async () => {
    const { namespace } = tools({
      nested: async ({ program }) => (await runtime.run({ program, bindings: [] })).value,
    })
    expect((await runtime.run({ program: "return await tools.nested({ program: 'return 6 * 7' })", bindings: [namespace] })).value).toBe(42)
  })
})

describe('failures and typed errors', () => {
  it('makes host failures catchable as the namespace error class', async () => {
    const { namespace } = tools({
      raw: async () => {
        throw 'raw-nope'
      },
      denied: () => {
        throw new Error('denied by host')
      },
      foreign: () => {
        throw vm.runInNewContext("new TypeError('from another realm')")
      },
    })
    const result = await runtime.run({
      program: `const out = []
        for (const name of ['fail', 'raw', 'denied', 'foreign']) {
          try { await tools[name]({}) } catch (e) {
            out.push({ is: e instanceof ToolCallError, error: e instanceof Error, name: e.name, toolName: e.toolName, message: e.message, ctor: e.constructor === ToolCallError })
          }
        }
        return out`,
      bindings: [namespace],
    })
    const entry = (toolName, message) => ({ is: true, error: true, name: 'ToolCallError', toolName, message, ctor: true })
    expect(result.value).toEqual([
      entry('fail', 'nope'),
      entry('raw', 'raw-nope'),
      entry('denied', 'denied by host'),
      entry('foreign', 'from another realm'),
    ])
  })

  it('defines the typed fields as own, enumerable, non-writable and non-configurable', async () => {
    const { namespace } = tools()
    const result = await runtime.run({
      program: `try { await tools.fail({}) } catch (e) {
          const d = (k) => { const x = Object.getOwnPropertyDescriptor(e, k); return [x.value, x.enumerable, x.writable, x.configurable] }
          return { name: d('name'), member: d('toolName'), message: d('message'), ctorName: ToolCallError.name, stack: e.stack }
        }`,
      bindings: [namespace],
    })
    expect(result.value.name).toEqual(['ToolCallError', true, false, false])
    expect(result.value.member).toEqual(['fail', true, false, false])
    expect(result.value.message).toEqual(['nope', false, true, true])
    expect(result.value.ctorName).toBe('ToolCallError')
    expect(result.value.stack).toBe('ToolCallError: nope\n    at program.ts:1:19')
  })

  it('keeps every code unit of a failure message, lone surrogates included', async () => {
    const { namespace } = tools({ odd: async () => { throw new Error('x\uD800y\uDC00') } })
    const result = await runtime.run({
      program: `try { await tools.odd({}) } catch (e) { return [e.message, e.stack] }`,
      bindings: [namespace],
    })
    expect(result.value).toEqual(['x\uD800y\uDC00', 'ToolCallError: x\uD800y\uDC00\n    at program.ts:1:19'])
    expect(await runtime.run({ program: "throw new TypeError('a\\uDBFFb')", bindings: [] })).toEqual({
      logs: [],
      error: { kind: 'exception', message: 'TypeError: a\uDBFFb\n    at program.ts:1:7' },
    })
  })

  it('materialises a consumer-declared class', async () => {
    const result = await runtime.run({
      program: "try { await helpers.h({}) } catch (e) { return [e instanceof HelperCallError, e.helperName, e.name] }",
      bindings: [{
        global: 'helpers',
        functions: { h: async () => { throw new Error('x') } },
        errorClass: { name: 'HelperCallError', memberNameProperty: 'helperName' },
      }],
    })
    expect(result.value).toEqual([true, 'h', 'HelperCallError'])
  })

  it('rejects with a plain Error when the namespace declares no class', async () => {
    const result = await runtime.run({
      program: `const out = []
        try { await plain.f({}) } catch (e) { out.push([e.name, 'toolName' in e, e.message, Object.getPrototypeOf(e) === Error.prototype]) }
        try { await plain.f(() => 1) } catch (e) { out.push([e.name, 'toolName' in e, e.message]) }
        return out`,
      bindings: [{ global: 'plain', functions: { f: async () => { throw new Error('nope') } } }],
    })
    expect(result.value).toEqual([
      ['Error', false, 'nope', true],
      ['Error', false, 'binding arguments must be lossless JSON'],
    ])
  })

  it('reports a name that stopped being an own function as an unknown binding', async () => {
    const functions = {
      tool: async () => 1,
      later: async () => 2,
      mutate: async () => {
        delete functions.tool
        functions.later = 'not a function'
        return null
      },
    }
    const result = await runtime.run({
      program: `await tools.mutate({})
        const out = []
        for (const n of ['tool', 'later']) { try { await tools[n]({}) } catch (e) { out.push([e instanceof ToolCallError, e.toolName, e.message]) } }
        return out`,
      bindings: [{ global: 'tools', functions, errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' } }],
    })
    expect(result.value).toEqual([
      [true, 'tool', 'unknown binding "tools.tool"'],
      [true, 'later', 'unknown binding "tools.later"'],
    ])
  })

  it('renders a host rejection whose String() throws without crashing', async () => {
    const { namespace } = tools({
      weird: async () => {
        throw { toString() { throw new Error('no') } }
      },
    })
    const result = await runtime.run({
      program: "try { await tools.weird({}) } catch (e) { return e.message }",
      bindings: [namespace],
    })
    expect(result.value).toBe('<unrenderable rejection value>')
  })

  it('ends the run when a binding rejection is never handled', async () => {
    const { namespace } = tools()
    const result = await runtime.run({
      program: 'void tools.fail({}); await new Promise(r => setTimeout(r, 50)); return 1',
      bindings: [namespace],
    })
    expect(result.error.kind).toBe('exception')
    expect(result.error.message).toMatch(/^ToolCallError: nope/)
  })

  it('builds typed errors from intrinsics the program cannot replace', async () => {
    const { namespace } = tools()
    const program = `
      const echoed = await tools.echo({ request: ['€', 1] })
      const originalKeys = Object.keys
      Array.isArray = () => false; Object.keys = () => []; Object.defineProperty = () => { throw new Error('patched') }
      Object.getPrototypeOf = () => null; Object.hasOwn = () => false; Object.is = () => false
      Number.isFinite = () => false; Number.isSafeInteger = () => false
      Reflect.apply = () => { throw new Error('patched') }; Reflect.ownKeys = () => []
      for (const k of Object.getOwnPropertyNames(Set.prototype)) { try { Set.prototype[k] = () => { throw new Error('patched') } } catch {} }
      String.prototype.charCodeAt = () => 0; String.prototype.codePointAt = () => 0; String.prototype.slice = () => ''
      Function.prototype.toString = () => 'function Object() { [native code] }'
      JSON.stringify = () => '{}'; JSON.parse = () => ({})
      Promise.prototype.then = function () { throw new Error('patched then') }
      Array.prototype[Symbol.iterator] = function* () { yield 'patched' }
      Object.prototype.constructor = null; Array.prototype.constructor = null
      Object.defineProperty.call ?? 0
      ;(originalKeys, 0)
      globalThis.Reflect.defineProperty(Object.prototype, 'get', { get() { return () => 'patched' }, configurable: true })
      for (const name of ['Array', 'Error', 'Function', 'Number', 'Object', 'Reflect', 'Set', 'String', 'Promise', 'JSON']) globalThis[name] = undefined
      let failure
      try { await tools.fail({}) } catch (e) { failure = { typed: e instanceof ToolCallError, name: e.name, toolName: e.toolName, message: e.message } }
      return { echoed, failure, completion: { ok: true, amount: 42 } }`
    expect(await runtime.run({ program, bindings: [namespace] })).toEqual({
      logs: [],
      value: {
        echoed: { request: ['€', 1] },
        failure: { typed: true, name: 'ToolCallError', toolName: 'fail', message: 'nope' },
        completion: { ok: true, amount: 42 },
      },
    })
  })

  it('answers junk calls without reaching the host with an invalid value', async () => {
    const { namespace, calls } = tools({ real: async () => 'still-works' })
    const result = await runtime.run({
      program: `const out = []
        try { await tools.echo.call(null) } catch (e) { out.push(e.message) }
        try { new tools.echo({}) } catch (e) { out.push(e instanceof TypeError) }
        try { await Reflect.apply(tools.echo, {}, []) } catch (e) { out.push(e.message) }
        out.push(tools['constructor'] === undefined)
        try { await tools.echo(Symbol()) } catch (e) { out.push(e.message) }
        out.push(await tools.real({}))
        return out`,
      bindings: [namespace],
    })
    const invalid = 'binding arguments must be lossless JSON'
    expect(result).toEqual({ logs: [], value: [invalid, true, invalid, true, invalid, 'still-works'] })
    expect(calls.echo).toBe(0)
  })
})

describe('hostile-peer invariants', () => {
  it('drops a late resolution after the run settled, with no unhandled rejection', async () => {
    const unhandled = []
    const onUnhandled = (reason) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    let resolveLate
    const { namespace } = tools({
      slow: () => new Promise((resolve) => (resolveLate = resolve)),
      slowFail: () => new Promise((_, reject) => setTimeout(() => reject(new Error('late failure')), 30)),
    })
    const controller = new AbortController()
    setTimeout(() => controller.abort('cancel-now'), 50)
    const result = await runtime.run({
      program: 'void tools.slowFail({}).catch(() => {}); await tools.slow({})',
      bindings: [namespace],
      signal: controller.signal,
    })
    expect(result).toEqual({ logs: [], error: { kind: 'abort', message: 'cancel-now' } })
    resolveLate(() => 'a lossy late value')
    await new Promise((r) => setTimeout(r, 50))
    process.off('unhandledRejection', onUnhandled)
    expect(unhandled).toEqual([])
    expect((await runtime.run({ program: 'return "next"', bindings: [namespace] })).value).toBe('next')
  })

  it('never dispatches calls made after the program completed', async () => {
    const { namespace, calls } = tools()
    const result = await runtime.run({
      program: "setTimeout(() => tools.echo({ late: true }), 0); return { get x() { tools.echo({ getter: true }); return 1 } }",
      bindings: [namespace],
    })
    expect(result).toEqual({ logs: [], value: { x: 1 } })
    await new Promise((r) => setTimeout(r, 20))
    expect(calls.echo).toBe(0)
  })

  it('returns values built by the runtime, not the host objects', async () => {
    const shared = { n: 1 }
    const { namespace } = tools({ give: async () => shared })
    const result = await runtime.run({ program: 'const v = await tools.give({}); v.n = 2; return v', bindings: [namespace] })
    expect(result.value).toEqual({ n: 2 })
    expect(shared).toEqual({ n: 1 })
  })
})
