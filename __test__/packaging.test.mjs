// Packaging: the package as users install it. The root package and its linux-x64-gnu binary
// package are packed with npm, installed into a fresh project, and plain Node (no build tools, no
// flags) loads and runs them, without this source checkout.
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

let work
let project

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'crn-pack-'))
  // The platform package, as `napi artifacts` would fill it.
  const platform = join(work, 'linux-x64-gnu')
  cpSync(join(root, 'npm', 'linux-x64-gnu'), platform, { recursive: true })
  copyFileSync(join(root, 'code-runtime-native.linux-x64-gnu.node'), join(platform, 'code-runtime-native.linux-x64-gnu.node'))
  npm(['pack', '--silent', '--pack-destination', work], platform)
  npm(['pack', '--silent', '--ignore-scripts', '--pack-destination', work], root)
  const tarballs = readdirSync(work).filter((f) => f.endsWith('.tgz')).map((f) => join(work, f))
  project = join(work, 'project')
  cpSync(join(root, 'examples'), join(project, 'programs'), { recursive: true })
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'host', version: '1.0.0', type: 'module' }))
  npm(['install', '--silent', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs, 'cordis@4.0.0-rc.10'], project)
}, 120_000)

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('the installed package', () => {
  it('ships the loader, the JavaScript API, the bootstrap files and the binary, not the sources', () => {
    const installed = join(project, 'node_modules', 'code-runtime-native')
    const files = readdirSync(installed)
    for (const expected of ['index.js', 'index.d.ts', 'lib', 'bin', 'py', 'package.json', 'README.md']) expect(files).toContain(expected)
    expect(readdirSync(join(installed, 'py')).sort()).toEqual(['bootstrap.py', 'protocol.py', 'runner.py'])
    for (const absent of ['src', '__test__', 'Cargo.toml', 'target', 'bench']) expect(files).not.toContain(absent)
    expect(readdirSync(join(project, 'node_modules', 'code-runtime-native-linux-x64-gnu'))).toContain(
      'code-runtime-native.linux-x64-gnu.node',
    )
  })

  it('runs Code Mode programs under plain Node', () => {
    const script = `
      import { Context } from 'cordis'
      import IsolateCodeRuntime from 'code-runtime-native'
      const ctx = new Context()
      await ctx.plugin(IsolateCodeRuntime)
      const result = await ctx.codeRuntime.run({
        program: \`const r = await tools.double({ n: 21 }); console.log('halfway', r)
          let failure
          try { await tools.fail({}) } catch (e) { failure = { typed: e instanceof ToolCallError, name: e.name, toolName: e.toolName, message: e.message } }
          return { doubled: r, failure }\`,
        bindings: [{
          global: 'tools',
          functions: { double: async ({ n }) => n * 2, fail: async () => { throw new Error('denied') } },
          errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' },
        }],
      })
      console.log(JSON.stringify(result))`
    writeFileSync(join(project, 'host.mjs'), script)
    const child = spawnSync(process.execPath, ['host.mjs'], { cwd: project, encoding: 'utf8', timeout: 30000 })
    expect(child.stderr).toBe('')
    expect(JSON.parse(child.stdout)).toEqual({
      logs: ['halfway 42'],
      value: { doubled: 42, failure: { typed: true, name: 'ToolCallError', toolName: 'fail', message: 'denied' } },
    })
  })

  it('runs Python programs from the bootstrap it ships, staged per run (spec python §16 case 17)', () => {
    const python = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout.trim()
    const script = `
      import { Context } from 'cordis'
      import PythonCodeRuntime from 'code-runtime-native/python'
      const ctx = new Context()
      await ctx.plugin(PythonCodeRuntime, { pythonBin: ${JSON.stringify(python)} })
      const result = await ctx.codeRuntime.run({
        program: 'import sys\\nr = await tools.double({"n": 21})\\nprint("halfway", r)\\nreturn [r, sys.modules["__main__"].__file__]',
        bindings: [{ global: 'tools', functions: { double: async ({ n }) => n * 2 } }],
      })
      console.log(JSON.stringify(result))`
    writeFileSync(join(project, 'python-host.mjs'), script)
    const child = spawnSync(process.execPath, ['python-host.mjs'], { cwd: project, encoding: 'utf8', timeout: 30000 })
    expect(child.stderr).toBe('')
    const result = JSON.parse(child.stdout)
    expect(result.logs).toEqual(['halfway 42'])
    expect(result.value[0]).toBe(42)
    expect(result.value[1]).toMatch(new RegExp(`^${tmpdir()}/code-runtime-native-python-[^/]+/bootstrap\\.py$`))
  })

  it('runs the command line through npx', () => {
    const child = spawnSync('npx', ['code-runtime-native', 'run', 'programs/hello.ts'], { cwd: project, encoding: 'utf8', timeout: 30000 })
    expect(child.status).toBe(0)
    expect(child.stdout).toContain('hello, world! { round: 1 }')
  })
})
