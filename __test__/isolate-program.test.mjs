// Programs end to end in a fresh isolate: strip, wrapper, values, errors, positions, isolation.
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

const run = (program, bindings = []) => runtime.run({ program, bindings })

describe('descriptors', () => {
  it('is a typescript runtime in a v8 isolate', () => {
    expect(runtime.language).toBe('typescript')
    expect(runtime.isolation).toBe('v8-isolate')
  })
})

describe('type strip and the program wrapper', () => {
  it('keeps every code unit of the program text, lone surrogates in strings and types included', async () => {
    // Raw lone surrogates in the source (not escapes): the strip must not turn them into U+FFFD.
    const program = "const a: '\uD800' = '\uD800' as '\uDFFF'\nconst b = `x\uDBFF${1}`\nconsole.log('\uDC00')\n" +
      "return [a.charCodeAt(0), b.length, b.charCodeAt(1), String.raw`\uD801`.charCodeAt(0)]"
    expect(await run(program)).toEqual({ logs: ['\uDC00'], value: [0xD800, 3, 0xDBFF, 0xD801] })
    // Positions after a lone surrogate still count it as one UTF-16 unit.
    expect((await run("const s = '\uD800'; throw new Error('at')")).error.message)
      .toBe('Error: at\n    at program.ts:1:22')
  })

  it('strips erasable TypeScript and keeps output in order', async () => {
    const program = [
      'interface P { x: number; y: number }',
      'const p: P = { x: 1, y: 2 } as P',
      "console.log('point', p); process.stdout.write('raw-out\\n'); console.warn('careful'); return p.x + p.y",
    ].join('\n')
    expect(await run(program)).toEqual({ logs: ['point { x: 1, y: 2 }', 'raw-out\n', 'careful'], value: 3 })
  })

  it('accepts every erasable construct', async () => {
    const program = [
      'type A = string',
      'declare const d: number',
      'function f<T>(this: void, a: T): T { return a }',
      'function g(a: number): number',
      'function g(a: any) { return a }',
      'abstract class Base { abstract m(): void }',
      'class C extends Base { private readonly y: number = 1; public z!: string; protected w?: number; override m() {} }',
      'let q!: string',
      'const n = (1 as unknown) satisfies unknown',
      'const nn = n!',
      'return f<number>(new C().y + g(1))',
    ].join('\n')
    expect(await run(program)).toEqual({ logs: [], value: 2 })
  })

  it.each([
    ['enum E { A }', /enum/],
    ['const enum E { A }', /enum/],
    ['namespace N { export const a = 1 }', /namespace/],
    ['class A { constructor(private x: number) {} }', /parameter property/],
    ["import x = require('x')", /./],
    ['export = 1', /./],
  ])('rejects non-erasable syntax %j before any isolate exists', async (program, pattern) => {
    const result = await run(program)
    expect(Object.keys(result)).toEqual(['logs', 'error'])
    expect(result.logs).toEqual([])
    expect(result.error.kind).toBe('exception')
    expect(result.error.message).toMatch(pattern)
    expect(result.error.message).toMatch(/^SyntaxError: .*\n {4}at program\.ts:1:\d+$/)
  })

  it('reports the enum diagnostic exactly, at the user position', async () => {
    expect(await run('enum E { A }')).toEqual({
      logs: [],
      error: {
        kind: 'exception',
        message: 'SyntaxError: TypeScript enum is not supported in strip-only mode\n    at program.ts:1:1',
      },
    })
    expect((await run('const x = 1;\nenum E { A }')).error.message).toContain('program.ts:2:1')
  })

  it('rejects static imports and exports, type-only ones included', async () => {
    for (const program of ["import fs from 'node:fs'", "import type { A } from 'a'", 'export const a = 1']) {
      const result = await run(program)
      expect(result.error.kind).toBe('exception')
    }
  })

  it('gives swc diagnostics for invalid syntax', async () => {
    const result = await run('let b: = 2')
    expect(result.error.kind).toBe('exception')
    expect(result.error.message).toMatch(/^SyntaxError: .+\n {4}at program\.ts:1:\d+$/)
  })

  it('runs the program as the body of a strict async function', async () => {
    expect((await run('return await Promise.resolve(41) + 1')).value).toBe(42)
    expect((await run('return this === undefined')).value).toBe(true)
    expect((await run('return typeof arguments')).value).toBe('object')
    const undeclared = await run('undeclared = 1')
    expect(undeclared.error.message).toMatch(/^ReferenceError: undeclared is not defined/)
  })

  it('keeps bindings and console lexical, not global', async () => {
    const { namespace } = tools()
    expect((await run('return [typeof globalThis.tools, typeof tools, globalThis.console === console]', [namespace])).value)
      .toEqual(['undefined', 'object', true])
    const redeclared = await run('let tools = 1', [namespace])
    expect(redeclared.error).toEqual({
      kind: 'exception',
      message: "SyntaxError: Identifier 'tools' has already been declared\n    at program.ts:1:5",
    })
    expect((await run('const console = 1')).error.message).toMatch(/^SyntaxError: Identifier 'console' has already been declared/)
    expect((await run('var tools = 5; return tools', [namespace])).value).toBe(5)
  })

  it('refuses a program that closes its function body early', async () => {
    const result = await run('}); (async function () {')
    expect(result.error.kind).toBe('exception')
    expect(result.error.message).toMatch(/^SyntaxError: /)
  })

  it('resolves a program of 100000 nested brackets as an exception', async () => {
    const result = await run('['.repeat(100000))
    expect(result.error.kind).toBe('exception')
    expect((await run('return 1')).value).toBe(1)
  })
})

describe('completion values', () => {
  it('omits value when the program returns nothing, keeps null', async () => {
    const none = await run('const x = 1')
    expect(none).toEqual({ logs: [] })
    expect('value' in none).toBe(false)
    expect(await run('return undefined')).toEqual({ logs: [] })
    expect(await run('return null')).toEqual({ logs: [], value: null })
  })

  it.each([
    ['null', null],
    ['0', 0],
    ['1.5', 1.5],
    ['2**60', 2 ** 60],
    ["''", ''],
    ["'\\uD800'", '\uD800'],
    ['[]', []],
    ['{}', {}],
    ['Object.assign(Object.create(null), { a: 1, b: [2] })', { a: 1, b: [2] }],
    ["JSON.parse('{\"__proto__\": 1}')", JSON.parse('{"__proto__": 1}')],
    ['new Array(50000).fill(7)', new Array(50000).fill(7)],
    ['(() => { const s = { k: 1 }; return { a: s, b: s } })()', { a: { k: 1 }, b: { k: 1 } }],
    ["({ 'key with space': 1, valid_id: 2, 3: 'three' })", { 3: 'three', 'key with space': 1, valid_id: 2 }],
  ])('returns lossless %s exactly', async (expression, expected) => {
    const result = await run(`return ${expression}`)
    expect(result).toEqual({ logs: [], value: expected })
    if (expression.startsWith('JSON.parse')) {
      expect(Object.getPrototypeOf(result.value)).toBe(Object.prototype)
      expect(Object.hasOwn(result.value, '__proto__')).toBe(true)
    }
  })

  it('returns a 3000-deep nested array exactly', async () => {
    const result = await run('let a = null; for (let i = 0; i < 3000; i++) a = [a]; return a')
    expect(result.logs).toEqual([])
    expect(isNestedNull(result.value, 3000)).toBe(true)
  })

  it.each([
    ['{ f: () => 1 }'],
    ['() => 1'],
    ['-0'],
    ['Infinity'],
    ['NaN'],
    ['Array(2)'],
    ['[1, , 3]'],
    ['(() => { const a = {}; a.self = a; return a })()'],
    ['new (class Exotic { x = 1 })()'],
    ['{ get a() { throw new Error("g") } }'],
    ['new Date()'],
    ['Object.defineProperty([1], "extra", { value: 1 })'],
    ['Object.assign([1], { extra: 1 })'],
    ['new Map()'],
    ['new (class Sub extends Array {})()'],
    ['[undefined]'],
    ['{ value: undefined }'],
    ['{ [Symbol()]: true }'],
    ['Object.defineProperty({}, "hidden", { value: 1, enumerable: false })'],
    ['new Proxy({}, {})'],
    ['10n'],
    ['Symbol("s")'],
    ['new Uint8Array(2)'],
    ['Object(1)'],
    ['(function () { return arguments })(1)'],
  ])('refuses lossy completion %s', async (expression) => {
    expect(await run(`return ${expression}`)).toEqual({
      logs: [],
      error: { kind: 'invalid-output', message: 'program completion must be lossless JSON' },
    })
  })

  it('refuses a spoofed Object-prototype impostor, even with Function.prototype.toString patched', async () => {
    const program = [
      'const fake = Object.create(null)',
      'function Object_() {}',
      "Object.defineProperty(Object_, 'name', { value: 'Object' })",
      'fake.constructor = Object_; Object_.prototype = fake',
      "Function.prototype.toString = function () { return 'function Object() { [native code] }' }",
      'return Object.create(fake)',
    ].join('\n')
    expect((await run(program)).error.kind).toBe('invalid-output')
  })

  it('reads each property once and refuses arrays a getter shortens', async () => {
    const reads = await run('let n = 0; const v = { get a() { return ++n } }; return { first: v, second: v }')
    expect(reads.value).toEqual({ first: { a: 1 }, second: { a: 2 } })
    const shortened = await run('const a = [1, 2, 3]; Object.defineProperty(a, 0, { get() { a.length = 1; return 1 } }); return a')
    expect(shortened.error.kind).toBe('invalid-output')
  })

  it('gives the same answers after the program replaces every global it could', async () => {
    const program = [
      'const keep = { a: [1, "x", null, true], b: { c: 2 } }',
      'Array.isArray = () => false; Object.keys = () => []; Object.getPrototypeOf = () => null',
      'JSON.stringify = () => "{}"; Reflect.ownKeys = () => []; Number.isFinite = () => false',
      'Object.defineProperty(Object.prototype, "get", { get() { throw new Error("get") }, configurable: true })',
      'globalThis.Object = undefined; globalThis.Array = undefined; globalThis.JSON = undefined',
      'return keep',
    ].join('\n')
    expect(await run(program)).toEqual({ logs: [], value: { a: [1, 'x', null, true], b: { c: 2 } } })
  })
})

describe('exceptions', () => {
  it('renders a thrown Error as its stack with the user positions', async () => {
    expect(await run("console.log('a')\nthrow new Error('kaboom')")).toEqual({
      logs: ['a'],
      error: { kind: 'exception', message: 'Error: kaboom\n    at program.ts:2:7' },
    })
    expect((await run("\n\nthrow new Error('p')")).error.message).toMatch(/^Error: p\n {4}at program\.ts:3:7/)
    const nested = await run('function inner() { throw new TypeError("deep") }\ninner()')
    expect(nested.error.message).toBe('TypeError: deep\n    at inner (program.ts:1:26)\n    at program.ts:2:1')
  })

  it('renders non-Error throws with String()', async () => {
    expect((await run("throw 'raw-throw'")).error).toEqual({ kind: 'exception', message: 'raw-throw' })
    expect((await run('throw {}')).error.message).toBe('[object Object]')
    expect((await run("throw Symbol('s')")).error.message).toBe('Symbol(s)')
    expect((await run('throw 42')).error.message).toBe('42')
  })

  it('handles stack-less and unrenderable throws', async () => {
    expect((await run("const e = new Error('bare'); e.stack = undefined; throw e")).error.message).toBe('bare')
    expect((await run("const e = new Error('x'); e.stack = 42; throw e")).error.message).toBe('42')
    expect((await run('throw Object.create(null)')).error.message).toBe('program threw an unrenderable value')
    expect((await run('throw { toString() { throw new Error("no") } }')).error.message)
      .toBe('program threw an unrenderable value')
  })

  it('keeps logs printed before a failure', async () => {
    const result = await run("console.log('before'); throw new Error('x')")
    expect(result.logs).toEqual(['before'])
    expect(result.error.kind).toBe('exception')
  })

  it('turns deep recursion into a catchable RangeError', async () => {
    const result = await run('function f() { return f() } f()')
    expect(result.error.kind).toBe('exception')
    expect(result.error.message).toMatch(/^RangeError: Maximum call stack size exceeded/)
    expect((await run('function f() { return f() } try { f() } catch (e) { return e.name }')).value).toBe('RangeError')
  })

  it('ends the run on a rejection nothing handles', async () => {
    const result = await run('Promise.reject(new Error("lost")); await new Promise(r => setTimeout(r, 20)); return 1')
    expect(result.error.kind).toBe('exception')
    expect(result.error.message).toMatch(/^Error: lost/)
    expect((await run('const p = Promise.reject(1); p.catch(() => {}); await null; return 2')).value).toBe(2)
  })

  it('ends the run on an uncaught error in a microtask or a write callback', async () => {
    const micro = await run("queueMicrotask(() => { throw new Error('micro') }); await new Promise(r => setTimeout(r, 20)); return 1")
    expect(micro).toEqual({ logs: [], error: { kind: 'exception', message: 'Error: micro\n    at program.ts:1:30' } })
    const callback = await run("process.stdout.write('x', () => { throw new Error('cb') }); await new Promise(r => setTimeout(r, 20))")
    expect(callback.logs).toEqual(['x'])
    expect(callback.error.message).toMatch(/^Error: cb/)
    expect((await run('queueMicrotask(() => { try { throw 1 } catch {} }); await null; return 3')).value).toBe(3)
  })

  it('ends the run on an uncaught error in a timer callback', async () => {
    const result = await run("setTimeout(() => { throw new Error('late') }, 0); await new Promise(r => setTimeout(r, 50))")
    expect(result.error.kind).toBe('exception')
    expect(result.error.message).toMatch(/^Error: late/)
  })
})

describe('what the program can see', () => {
  it('has no Node authority', async () => {
    expect((await run('return [typeof require, typeof module, typeof exports, typeof __filename, typeof __dirname, typeof Buffer, typeof fetch, typeof setImmediate]')).value)
      .toEqual(Array(8).fill('undefined'))
    expect((await run("return Function('return typeof require')()")).value).toBe('undefined')
    expect((await run('return [typeof postMessage, typeof parentPort, typeof Deno, typeof Bun, typeof WebAssembly]')).value)
      .toEqual(Array(5).fill('undefined'))
    const dynamic = await run("await import('node:fs')")
    expect(dynamic.error.kind).toBe('exception')
    expect(dynamic.error.message).toMatch(/^TypeError: .*import/)
    // A long specifier (the host's workflow engine imports a 65 KB data: URL) is quoted in 100
    // code units at most, with its length.
    const long = await run("await import('data:text/plain,' + 'x'.repeat(65536))")
    expect(long.error).toEqual({
      kind: 'exception',
      message: `TypeError: import() is not available in this runtime: programs can load only data: URLs of JavaScript modules and node:vm (import of "data:text/plain,${'x'.repeat(84)}…" (65552 characters))\n    at program.ts:1:33`,
    })
    expect((await run("await import('./x.js')")).error.message).toMatch(/\(import of "\.\/x\.js"\)/)
    expect((await run("try { await import('./x.js') } catch (e) { return [e instanceof TypeError, /import/.test(e.message)] }")).value)
      .toEqual([true, true])
  })

  it('offers a minimal process', async () => {
    expect((await run('return Object.keys(process).sort()')).value).toEqual(['env', 'exit', 'stderr', 'stdout'])
    expect((await run('return [JSON.stringify(process.env), Object.isFrozen(process.env)]')).value).toEqual(['{}', true])
  })

  it('ends the run on process.exit, uncatchably', async () => {
    expect(await run('process.exit(7)')).toEqual({
      logs: [],
      error: { kind: 'worker-exit', message: 'program exited with code 7 before completing' },
    })
    expect((await run('process.exit()')).error.message).toBe('program exited with code 0 before completing')
    expect(await run("try { process.exit(3) } finally { console.log('no') }")).toEqual({
      logs: [],
      error: { kind: 'worker-exit', message: 'program exited with code 3 before completing' },
    })
    expect((await run("console.log('kept'); process.exit('5')")).logs).toEqual(['kept'])
    expect((await run("try { process.exit('x') } catch (e) { return e instanceof TypeError }")).value).toBe(true)
  })

  it('writes to stdout and stderr with Node semantics', async () => {
    expect((await run("return [process.stdout.write('a'), process.stderr.write('b')]")).logs).toEqual(['a', 'b'])
    expect((await run("process.stdout.write('captured', 'utf8'); process.stdout.write(new Uint8Array([98, 121, 116, 101, 115])); process.stdout.write(new Uint8Array([0xff]))")).logs)
      .toEqual(['captured', 'bytes', '\uFFFD'])
    expect(await run("await new Promise(r => process.stdout.write('flushed', r)); return 'done'"))
      .toEqual({ logs: ['flushed'], value: 'done' })
    const order = await run(`const seen = []
      process.stdout.write('x', (e) => seen.push(['cb1', e]))
      process.stderr.write('y', 'utf8', (e) => seen.push(['cb2', e]))
      seen.push('sync')
      await null
      return seen`)
    expect(order.value).toEqual(['sync', ['cb1', null], ['cb2', null]])
    expect((await run('process.stdout.write(12)')).logs).toEqual(['12'])
  })

  it('runs every console level into one ordered log', async () => {
    const program = "console.log('plain', { a: 1 }); console.info('i'); console.warn('w'); console.error('e'); console.debug('d')"
    expect((await run(program)).logs).toEqual(['plain { a: 1 }', 'i', 'w', 'e', 'd'])
    expect((await run("const log = console.log; log('unbound'); globalThis.console.log('g')")).logs).toEqual(['unbound', 'g'])
    expect((await run("console.log(); console.log('got', 42); console.log(['a', 1]); console.log(1, true, null, undefined)")).logs)
      .toEqual(['', 'got 42', "[ 'a', 1 ]", '1 true null undefined'])
    expect(Object.getPrototypeOf((await run('return Object.getPrototypeOf(console) === null')).value)).toBe(Boolean.prototype)
  })
})

describe('isolation and concurrency', () => {
  it('shares nothing between runs', async () => {
    expect((await run('globalThis.leak = 1; Object.prototype.polluted = 1; return 1')).value).toBe(1)
    expect((await run('return [typeof globalThis.leak, typeof {}.polluted]')).value).toEqual(['undefined', 'undefined'])
  })

  it('runs 50 programs concurrently, each with its own result', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => run(`await new Promise(r => setTimeout(r, ${i % 7})); console.log('run', ${i}); return ${i} * 2`)),
    )
    results.forEach((result, i) => expect(result).toEqual({ logs: [`run ${i}`], value: i * 2 }))
  })

  it('does not block the event loop while a run computes', async () => {
    const slow = run('const end = Date.now() + 300; while (Date.now() < end) {} return "done"')
    let ticks = 0
    const timer = setInterval(() => ticks++, 10)
    expect((await slow).value).toBe('done')
    clearInterval(timer)
    expect(ticks).toBeGreaterThan(5)
  })
})
