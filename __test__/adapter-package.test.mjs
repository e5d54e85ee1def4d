// The framework adapters as a package ships them: one subpath per framework, each framework an
// optional peer dependency pinned exactly for the suites, and every adapter's declared type what
// its framework's own published types accept.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

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
      ['CodeRuntimeTransport'],
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
