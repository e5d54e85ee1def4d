// The framework adapters as a package ships them: one subpath per framework, each framework an
// optional peer dependency pinned exactly for the suites, and every adapter's declared type what
// its framework's own published types accept.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { CodeRuntimeTransport } from 'code-runtime-native/mastra'
import { createCodeRuntimeDriver } from 'code-runtime-native/tanstack'
import { CodeRuntimeExecutor } from 'code-runtime-native/cloudflare'
import { codeRuntimeTool } from 'code-runtime-native/ai-sdk'

const root = fileURLToPath(new URL('..', import.meta.url))
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))

/** The version npm installed (read from the file: not every package exports its package.json). */
function installed(name) {
  return JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8')).version
}

const ADAPTERS = {
  mastra: { peer: '@mastra/core', tested: '1.71.0' },
  tanstack: { peer: '@tanstack/ai-code-mode', tested: '0.3.4' },
  cloudflare: { peer: '@cloudflare/codemode', tested: '0.5.6' },
  'ai-sdk': { peer: 'ai', tested: '7.0.173' },
}

describe('the adapters in package.json', () => {
  it('export one subpath per framework, with its types', async () => {
    for (const name of Object.keys(ADAPTERS)) {
      expect(pkg.exports[`./${name}`]).toEqual({
        types: `./lib/adapters/${name}.d.ts`,
        import: `./lib/adapters/${name}.mjs`,
        default: `./lib/adapters/${name}.mjs`,
      })
      expect(readFileSync(new URL(`../lib/adapters/${name}.d.ts`, import.meta.url), 'utf8')).toContain('export')
    }
    const loaded = await Promise.all(Object.keys(ADAPTERS).map((name) => import(`code-runtime-native/${name}`)))
    expect(loaded.map((module) => Object.keys(module).sort())).toEqual([
      ['CodeRuntimeTransport', 'createCodeMode'],
      ['createCodeRuntimeDriver'],
      ['CodeRuntimeExecutor', 'sanitizeToolName'],
      ['CodeRunError', 'codeRuntimeTool'],
    ])
  })

  it('declare each framework an optional peer, pinned exactly as a devDependency at the version the suites test', () => {
    for (const { peer, tested } of Object.values(ADAPTERS)) {
      expect(pkg.peerDependencies[peer]).toBe(`^${tested}`)
      expect(pkg.peerDependenciesMeta[peer]).toEqual({ optional: true })
      expect(pkg.devDependencies[peer]).toBe(tested)
      expect(installed(peer)).toBe(tested)
    }
    // What the suites also load: TanStack AI itself (the peer of its Code Mode) and zod.
    expect([pkg.devDependencies['@tanstack/ai'], installed('@tanstack/ai')]).toEqual(['0.39.0', '0.39.0'])
    expect([pkg.devDependencies.zod, installed('zod')]).toEqual(['4.6.7', '4.6.7'])
  })

  it("type-check against each framework's own published types", () => {
    const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url))
    const project = '__test__/types/frameworks/tsconfig.json'
    expect(() => execFileSync(process.execPath, [tsc, '-p', project], { cwd: root, encoding: 'utf8' })).not.toThrow()
  })
})

describe('misuse, refused with what to do', () => {
  it('a runtime option that is not a ctx.ptcRuntime, or runs another language', () => {
    expect(() => new CodeRuntimeTransport({ runtime: { run() {} } })).toThrow(
      'code-runtime-native: code-runtime-native/mastra: options.runtime must be a ctx.ptcRuntime (an object with resolve() and run()); ' +
        'pass the service itself, or leave runtime out to let the adapter start its own',
    )
    const python = { language: 'python', resolve() {}, run() {} }
    expect(() => createCodeRuntimeDriver({ runtime: python })).toThrow(
      'code-runtime-native: code-runtime-native/tanstack: the framework writes typescript programs, but options.runtime runs python; pass an IsolatePtcRuntime',
    )
    expect(() => codeRuntimeTool({ tools: undefined })).toThrow('code-runtime-native: codeRuntimeTool: options.tools must be an AI SDK ToolSet (an object of tools)')
  })

  it("an invalid runtime config: the runtime's own message, in each framework's failure shape", async () => {
    const config = { computeMs: -1 }
    const message = 'code-runtime-native: config.computeMs must be a positive number, got -1'
    const executor = new CodeRuntimeExecutor({ config })
    expect(await executor.execute('async () => 1', [])).toEqual({ result: undefined, error: message, logs: [] })
    const transport = new CodeRuntimeTransport({ config })
    await expect(transport.run({ program: 'return 1', toolIds: [], dispatch: async () => null, timeout: 1000 })).rejects.toThrow(message)
    const driver = createCodeRuntimeDriver({ config })
    const context = await driver.createContext({ bindings: {} })
    expect(await context.execute('return 1')).toEqual({ success: false, error: { name: 'Error', message }, logs: [] })
  })

  it('a run after dispose', async () => {
    const executor = new CodeRuntimeExecutor()
    expect(await executor.execute('async () => 1', [])).toEqual({ result: 1, logs: [] })
    await executor.dispose()
    expect(await executor.execute('async () => 1', [])).toEqual({
      result: undefined,
      error: 'code-runtime-native: this adapter was disposed; create a new one to run programs',
      logs: [],
    })
  })
})
