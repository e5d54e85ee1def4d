// The service seam: cordis registration, config validation, the package surface and its types.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Context, Service } from 'cordis'
import { describe, expect, it } from 'vitest'
import DefaultExport, {
  DUNDER_MEMBER,
  IsolateCodeRuntime,
  PORTABLE_RESERVED_WORDS,
  PythonCodeRuntime,
  RESERVED_BINDING_GLOBALS,
  RESERVED_ERROR_MEMBERS,
  defineCodeRuntimes,
} from 'code-runtime-native'
import IsolateSubpath from 'code-runtime-native/isolate'
import PythonSubpath from 'code-runtime-native/python'

describe('package surface', () => {
  it('default-exports IsolateCodeRuntime, and each subpath its class', () => {
    expect(DefaultExport).toBe(IsolateCodeRuntime)
    expect(IsolateSubpath).toBe(IsolateCodeRuntime)
    expect(PythonSubpath).toBe(PythonCodeRuntime)
  })

  it('pins the reserved sets exactly', () => {
    expect([...PORTABLE_RESERVED_WORDS].sort()).toEqual([
      'await', 'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do', 'else',
      'enum', 'export', 'extends', 'false', 'finally', 'for', 'function', 'if', 'import', 'in', 'instanceof', 'new',
      'null', 'return', 'super', 'switch', 'this', 'throw', 'true', 'try', 'typeof', 'var', 'void', 'while', 'with',
      'yield', 'let', 'static', 'implements', 'interface', 'package', 'private', 'protected', 'public', 'arguments',
      'eval', 'False', 'None', 'True', 'and', 'as', 'assert', 'async', 'def', 'del', 'elif', 'except', 'from', 'global',
      'is', 'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise', 'match', 'type', '_',
    ].sort())
    for (const word of ['print', 'exec', 'Object', 'process']) expect(PORTABLE_RESERVED_WORDS.has(word)).toBe(false)
    expect([...RESERVED_BINDING_GLOBALS]).toEqual(['console', '__dsh_main__', '__builtins__', '__name__', '__debug__'])
    expect([...RESERVED_ERROR_MEMBERS]).toEqual(['name', 'message', 'stack', 'args', 'with_traceback', 'add_note'])
    for (const yes of ['__x__', '__proto__']) expect(DUNDER_MEMBER.test(yes)).toBe(true)
    for (const no of ['__', '____', '__mid']) expect(DUNDER_MEMBER.test(no)).toBe(false)
  })

  it('has public types that compile under tsc --strict', () => {
    const root = fileURLToPath(new URL('..', import.meta.url))
    const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url))
    expect(() => execFileSync(process.execPath, [tsc, '-p', '__test__/types/tsconfig.json'], { cwd: root, encoding: 'utf8' }))
      .not.toThrow()
  })

  it("has ctx.ptcRuntime types that are the host's published seam's (@deepseek-ai/dsh-ptc-runtime)", () => {
    const root = fileURLToPath(new URL('..', import.meta.url))
    const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url))
    const project = '__test__/types/host/tsconfig.json'
    expect(() => execFileSync(process.execPath, [tsc, '-p', project], { cwd: root, encoding: 'utf8' })).not.toThrow()
  })
})

describe('cordis registration', () => {
  it('registers ctx.codeRuntime, resolves failures as results, and unregisters on dispose', async () => {
    const ctx = new Context()
    const fiber = await ctx.plugin(IsolateCodeRuntime)
    expect(ctx.codeRuntime).toBeDefined()
    expect(ctx.get('codeRuntime').language).toBe('typescript')
    expect(await ctx.codeRuntime.run({ program: 'throw new Error("as a result")', bindings: [] }))
      .toMatchObject({ logs: [], error: { kind: 'exception' } })
    expect(await ctx.codeRuntime.run({ program: '', bindings: [], signal: AbortSignal.abort('pre') }))
      .toEqual({ logs: [], error: { kind: 'abort', message: 'pre' } })
    await fiber.dispose()
    expect(ctx.get('codeRuntime')).toBeUndefined()
  })

  it('refuses a second provider with the cordis error', async () => {
    const ctx = new Context()
    const fiber = await ctx.plugin(IsolateCodeRuntime)
    await expect(ctx.plugin(IsolateCodeRuntime, {})).rejects.toThrow(/registered/)
    await fiber.dispose()
  })

  it('loads with no config, using the production defaults', async () => {
    const ctx = new Context()
    await ctx.plugin(IsolateCodeRuntime)
    expect(IsolateCodeRuntime.Config({})).toEqual({
      computeMs: 60000,
      maxWallMs: 600000,
      maxOutputBytes: 67108864,
      maxOldGenerationSizeMb: 512,
      maxPendingCalls: 128,
      allowUnsandboxed: false,
      traceContent: false,
    })
  })
})

describe('config validation', () => {
  const load = async (config) => {
    const ctx = new Context()
    await ctx.plugin(IsolateCodeRuntime, config)
    return ctx
  }

  it.each([
    [{ computeMs: -1 }, 'code-runtime-native: config.computeMs must be a positive number, got -1'],
    [{ computeMs: NaN }, 'code-runtime-native: config.computeMs must be a positive number, got NaN'],
    [{ maxWallMs: Infinity }, 'code-runtime-native: config.maxWallMs must be a positive number, got Infinity'],
    [{ maxOutputBytes: 0 }, 'code-runtime-native: config.maxOutputBytes must be a positive number, got 0'],
    [{ maxOldGenerationSizeMb: -5 }, 'code-runtime-native: config.maxOldGenerationSizeMb must be a positive number, got -5'],
    [{ maxOutputBytes: 3 }, 'code-runtime-native: config.maxOutputBytes must be a safe integer of at least 4, got 3'],
    [{ maxOutputBytes: 4.5 }, 'code-runtime-native: config.maxOutputBytes must be a safe integer of at least 4, got 4.5'],
    [
      { maxWallMs: 2147483648 },
      'code-runtime-native: config.maxWallMs must be at most 2147483647 (Node clamps a longer setTimeout delay to 1ms), got 2147483648',
    ],
  ])('rejects %j', async (config, message) => {
    await expect(load(config)).rejects.toThrow(message)
  })

  it('checks keys in order and lets the schema refuse non-numbers', async () => {
    await expect(load({ maxWallMs: -1, computeMs: -2 })).rejects.toThrow(/computeMs must be a positive number, got -2/)
    await expect(load({ computeMs: 'fast' })).rejects.toThrow()
  })

  it('loads the boundary values, fractional ones included', async () => {
    const ctx = await load({ maxWallMs: 2147483647, maxOutputBytes: 4, computeMs: 1000.5, maxOldGenerationSizeMb: 64.5 })
    expect(await ctx.codeRuntime.run({ program: '', bindings: [] })).toEqual({ logs: [] })
  })
})

describe('a host base class', () => {
  it('builds the same services on a base class the host passes in', async () => {
    class CodeRuntime extends Service {
      constructor(ctx, name) {
        super(ctx, name)
        this.hostBase = true
      }
      describe() {
        return `${this.language} in ${this.isolation}`
      }
    }
    const { IsolateCodeRuntime: HostIsolate } = defineCodeRuntimes(CodeRuntime)
    const ctx = new Context()
    const fiber = await ctx.plugin(HostIsolate, { computeMs: 1000 })
    expect(ctx.codeRuntime.hostBase).toBe(true)
    expect(ctx.codeRuntime.describe()).toBe('typescript in v8-isolate')
    expect(await ctx.codeRuntime.run({ program: 'return 2', bindings: [] })).toEqual({ logs: [], value: 2 })
    expect(HostIsolate.Config).toBe(IsolateCodeRuntime.Config)
    await fiber.dispose()
    expect(ctx.get('codeRuntime')).toBeUndefined()
  })
})
