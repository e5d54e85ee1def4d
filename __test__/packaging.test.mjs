// Packaging: the package as users install it, from a real registry. The release flow
// (__test__/registry/release.mjs: the build job's artifact moved between jobs as Actions moves it,
// modes dropped; napi artifacts, napi prepublish, npm publish) publishes the root package and its
// linux-x64-gnu platform package to a verdaccio started on 127.0.0.1; then fresh projects run
// `npm install code-runtime-native cordis` with no Rust toolchain on PATH, exactly as a user
// would, and plain Node (no build tools, no flags) runs programs through ctx.codeRuntime with every
// sandbox layer, as this user and as an unprivileged one. Two more releases are published as the
// release looked before its modes were restored (the helper not executable) and with no helper at
// all: installing either, both runtimes refuse to load with the repair, unless allowed to run
// unsandboxed.
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAs } from './process-helpers.mjs'
import { npm, pathWithoutRust, publishRelease, registryEnv, repo, stageArtifacts, stageRelease, TARGET } from './registry/release.mjs'
import { startRegistry } from './registry/verdaccio.mjs'
import { ANSWER, THREAD_SANDBOX, UNSANDBOXED_PYTHON, expectEveryLayer, hostScript, refusal } from './sandbox-helper-host.mjs'
import { SANDBOX_HELPER, platformFiles } from '../scripts/platform-files.mjs'

const PLATFORM_PACKAGE = `code-runtime-native-${TARGET}`
const { version } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'))
const HELPER = SANDBOX_HELPER.name
/** The releases whose platform package ships an unusable helper, by what is wrong with it. */
const BROKEN = {
  'not-executable': { version: `${version}-helper-mode-0644`, tamper: (dir) => chmodSync(join(dir, HELPER), 0o644) },
  absent: { version: `${version}-helper-absent`, tamper: withoutHelper },
}

/** A platform package that neither holds nor lists the helper (napi prepublish checks `files`). */
function withoutHelper(dir) {
  rmSync(join(dir, HELPER))
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...manifest, files: manifest.files.filter((f) => f !== HELPER) }, null, 2))
}
const PYTHON = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout.trim()

let work
let registry
let userEnv
let project

/** A fresh host project; `npm install <args>` as a user on a machine without Rust. */
function userProject(name, installArgs) {
  const dir = join(work, name)
  mkdirSync(dir)
  cpSync(join(repo, 'examples'), join(dir, 'programs'), { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'host', version: '1.0.0', type: 'module' }))
  npm(['install', '--no-audit', '--no-fund', ...installArgs], dir, userEnv)
  return dir
}

function runNode(dir, file, source) {
  writeFileSync(join(dir, file), source)
  return spawnSync(process.execPath, [file], { cwd: dir, encoding: 'utf8', timeout: 30000, env: { ...process.env, ...userEnv } })
}

/** Loads both runtimes from the installed package in `dir` with `configs` (sandbox-helper-host.mjs). */
function loadInstalled(dir, { isolate = {}, python = {} } = {}) {
  const child = runNode(dir, 'runtimes.mjs', hostScript({ isolate, python: { pythonBin: PYTHON, ...python } }, 'code-runtime-native'))
  expect(child.stderr).toBe('')
  return JSON.parse(child.stdout)
}

/** The installed platform package's folder and its helper, as the addon finds them (real paths). */
function installedHelper(dir) {
  const pkg = realpathSync(join(dir, 'node_modules', PLATFORM_PACKAGE))
  return { pkg, helper: join(pkg, HELPER) }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'crn-pack-'))
  chmodSync(work, 0o711) // the unprivileged pass reaches its project through here
  registry = await startRegistry(join(work, 'registry'))
  const artifacts = stageArtifacts(join(work, 'artifacts'))
  publishRelease(stageRelease(join(work, 'release')), artifacts, registry)
  for (const [problem, { version: broken, tamper }] of Object.entries(BROKEN)) {
    publishRelease(stageRelease(join(work, `release-${problem}`), { version: broken }), artifacts, registry, { tag: `broken-${problem}`, tamper })
  }
  userEnv = { ...registryEnv(registry), PATH: pathWithoutRust() }
  project = userProject('project', ['code-runtime-native', 'cordis'])
}, 600_000)

afterAll(async () => {
  await registry?.stop()
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('the published packages', () => {
  it('the platform package holds the helper executable (-rwxr-xr-x), though the artifact it came from arrived 0644', () => {
    expect(statSync(join(work, 'artifacts', `bindings-${TARGET}`, HELPER)).mode & 0o777).toBe(0o644)
    const tarballs = join(work, 'tarballs')
    mkdirSync(tarballs)
    const tarball = npm(['pack', `${PLATFORM_PACKAGE}@${version}`, '--pack-destination', tarballs, '--silent'], work, userEnv).trim()
    const listing = execFileSync('tar', ['tvzf', join(tarballs, tarball)], { encoding: 'utf8' }).split('\n')
    expect(listing.find((line) => line.endsWith(` package/${HELPER}`))).toMatch(/^-rwxr-xr-x /)
  })

  it('the root declares its platform packages in optionalDependencies, as napi prepublish wrote them', () => {
    const view = (spec, field) => JSON.parse(npm(['view', spec, field, '--json'], work, userEnv))
    expect(view(`code-runtime-native@${version}`, 'optionalDependencies')).toEqual({ [PLATFORM_PACKAGE]: version })
    const platform = JSON.parse(npm(['view', `${PLATFORM_PACKAGE}@${version}`, '--json'], work, userEnv))
    expect({ os: platform.os, cpu: platform.cpu, libc: platform.libc, main: platform.main }).toEqual({
      os: [process.platform],
      cpu: [process.arch],
      libc: TARGET.endsWith('-gnu') ? ['glibc'] : undefined,
      main: `code-runtime-native.${TARGET}.node`,
    })
  })
})

describe('npm install code-runtime-native cordis, with no Rust on PATH', () => {
  it('runs with a PATH that really has no cargo or rustc', () => {
    for (const tool of ['cargo', 'rustc']) {
      expect(spawnSync('sh', ['-c', `command -v ${tool}`], { env: { PATH: userEnv.PATH } }).status).not.toBe(0)
    }
    expect(spawnSync('sh', ['-c', 'command -v npm'], { env: { PATH: userEnv.PATH } }).status).toBe(0)
  })

  it('gets the platform package through the root package alone (optionalDependencies)', () => {
    expect(Object.keys(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).dependencies).sort()).toEqual([
      'code-runtime-native',
      'cordis',
    ])
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8'))
    expect(lock.packages[`node_modules/${PLATFORM_PACKAGE}`]).toMatchObject({ version, optional: true })
    expect(lock.packages['node_modules/code-runtime-native'].optionalDependencies).toEqual({ [PLATFORM_PACKAGE]: version })
    const resolved = execFileSync(
      process.execPath,
      ['-e', `console.log(require('node:module').createRequire(require.resolve('code-runtime-native/package.json')).resolve('${PLATFORM_PACKAGE}'))`],
      { cwd: project, encoding: 'utf8' },
    ).trim()
    expect(resolved).toBe(join(project, 'node_modules', PLATFORM_PACKAGE, `code-runtime-native.${TARGET}.node`))
  })

  it('ships the loader, the JavaScript API, the bootstrap files and the binary, not the sources', () => {
    const installed = join(project, 'node_modules', 'code-runtime-native')
    const files = readdirSync(installed)
    for (const expected of ['index.js', 'index.d.ts', 'lib', 'bin', 'py', 'docs', 'package.json', 'README.md']) expect(files).toContain(expected)
    // The reference README and the types' comments link to, as in the repository.
    expect(readdirSync(join(installed, 'docs')).sort()).toEqual(readdirSync(join(repo, 'docs')).sort())
    expect(readdirSync(join(installed, 'py')).sort()).toEqual(['bootstrap.py', 'protocol.py', 'runner.py', 'template.py'])
    for (const absent of ['src', '__test__', 'Cargo.toml', 'target', 'bench', 'npm', 'scripts']) expect(files).not.toContain(absent)
    expect(files.filter((f) => f.endsWith('.node'))).toEqual([])
    // The platform package: the addon, plus the files scripts/platform-files.mjs lists for it
    // (the sandbox helper on Linux), executable as installed.
    expect(readdirSync(join(project, 'node_modules', PLATFORM_PACKAGE)).sort()).toEqual(
      ['README.md', `code-runtime-native.${TARGET}.node`, 'package.json', ...platformFiles(TARGET).map(({ name }) => name)].sort(),
    )
    for (const { name, mode } of platformFiles(TARGET)) {
      expect(statSync(join(project, 'node_modules', PLATFORM_PACKAGE, name)).mode & 0o111).toBe(mode & 0o111)
    }
  })

  it(`both runtimes load with every sandbox layer, as this process's user (uid ${process.getuid()})`, () => {
    expectEveryLayer(loadInstalled(project), expect)
  })

  it('both runtimes load with every sandbox layer as an unprivileged user, in a host process of its own', async () => {
    // Root drops to nobody for this pass; a non-root suite runs it as itself, with the system's
    // python3 (the suite's own may live under a private home).
    const uid = process.getuid() === 0 ? 65534 : process.getuid()
    const gid = process.getuid() === 0 ? 65534 : process.getgid()
    const tmp = join(work, 'unprivileged-tmp')
    mkdirSync(tmp)
    chownSync(tmp, uid, gid)
    const script = join(project, 'unprivileged.mjs')
    writeFileSync(script, hostScript({ isolate: {}, python: { pythonBin: '/usr/bin/python3' } }, 'code-runtime-native'))
    // This Node may live where that user cannot reach it (CI's Node 22+ are under /root): a copy.
    const node = join(tmp, 'node')
    copyFileSync(process.execPath, node)
    chmodSync(node, 0o755)
    const { code, stdout, stderr } = await runAs(node, script, { uid, gid, cwd: project, env: { PATH: '/usr/bin:/bin', TMPDIR: tmp } })
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expectEveryLayer(JSON.parse(stdout), expect)
  })

  it('runs a TypeScript program through ctx.codeRuntime under plain Node', () => {
    const child = runNode(
      project,
      'host.mjs',
      `
      import { Context } from 'cordis'
      import IsolateCodeRuntime from 'code-runtime-native'
      const ctx = new Context()
      await ctx.plugin(IsolateCodeRuntime)
      const result = await ctx.codeRuntime.run({
        program: \`const r: number = await tools.double({ n: 21 }); console.log('halfway', r)
          let failure
          try { await tools.fail({}) } catch (e) { failure = { typed: e instanceof ToolCallError, name: e.name, toolName: e.toolName, message: e.message } }
          return { doubled: r, failure }\`,
        bindings: [{
          global: 'tools',
          functions: { double: async ({ n }) => n * 2, fail: async () => { throw new Error('denied') } },
          errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' },
        }],
      })
      console.log(JSON.stringify(result))`,
    )
    expect(child.stderr).toBe('')
    expect(JSON.parse(child.stdout)).toEqual({
      logs: ['halfway 42'],
      value: { doubled: 42, failure: { typed: true, name: 'ToolCallError', toolName: 'fail', message: 'denied' } },
    })
  })

  // Case 17 of docs/acceptance.md.
  it('runs a Python program through ctx.codeRuntime from the bootstrap it ships, staged per run (17)', () => {
    const python = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout.trim()
    const child = runNode(
      project,
      'python-host.mjs',
      `
      import { Context } from 'cordis'
      import PythonCodeRuntime from 'code-runtime-native/python'
      const ctx = new Context()
      await ctx.plugin(PythonCodeRuntime, { pythonBin: ${JSON.stringify(python)} })
      const result = await ctx.codeRuntime.run({
        program: 'import sys\\nr = await tools.double({"n": 21})\\nprint("halfway", r)\\nreturn [r, sys.modules["__main__"].__file__]',
        bindings: [{ global: 'tools', functions: { double: async ({ n }) => n * 2 } }],
      })
      result.sandbox = ctx.codeRuntime.sandbox
      console.log(JSON.stringify(result))`,
    )
    expect(child.stderr).toBe('')
    const result = JSON.parse(child.stdout)
    expect(result.logs).toEqual(['halfway 42'])
    expect(result.value[0]).toBe(42)
    expect(result.value[1]).toMatch(new RegExp(`^${tmpdir()}/code-runtime-native-python-[^/]+/bootstrap\\.py$`))
    // The platform package carries the sandbox helper, and the installed addon finds it.
    expect(result.sandbox).toMatchObject({ process: true, helper: true, namespaces: true, seccomp: true })
    expect(result.sandbox.landlock).toBeGreaterThanOrEqual(6)
  })

  it('runs the command line through npx', () => {
    const child = spawnSync('npx', ['code-runtime-native', 'run', 'programs/hello.ts'], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60000,
      env: { ...process.env, ...userEnv },
    })
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    expect(child.stdout).toContain('hello, world! { round: 1 }')
  })
})

describe('npm install --omit=optional code-runtime-native cordis', () => {
  it('fails at import with an error that names the missing platform package and why', () => {
    const dir = userProject('no-optional', ['--omit=optional', 'code-runtime-native', 'cordis'])
    expect(readdirSync(join(dir, 'node_modules'))).not.toContain(PLATFORM_PACKAGE)
    const child = runNode(dir, 'host.mjs', "import('code-runtime-native').catch((e) => { console.log(JSON.stringify({ code: e.code, message: e.message })); process.exit(3) })")
    expect(child.status).toBe(3)
    const { code, message } = JSON.parse(child.stdout)
    expect(code).toBe('ERR_CODE_RUNTIME_NATIVE_BINARY')
    expect(message).toContain(`the platform package ${PLATFORM_PACKAGE}@${version} is not installed`)
    expect(message).toContain(`compiled addon for ${process.platform} ${process.arch}`)
    if (process.platform === 'linux') expect(message).toMatch(/ \(glibc \d+\.\d+\)/)
    expect(message).toContain(`optionalDependencies entry "${PLATFORM_PACKAGE}": "${version}"`)
    expect(message).toContain('--omit=optional')
    expect(message).toContain(`npm install ${PLATFORM_PACKAGE}@${version}`)
    expect(message).not.toMatch(/wasm32-wasi|wasi\.cjs|npm\/cli\/issues\/4828/)
  })
})

describe('a platform package published with its helper not executable (the release before its modes were restored)', () => {
  const { version: broken } = BROKEN['not-executable']
  let dir
  beforeAll(() => {
    dir = userProject('helper-mode-0644', [`code-runtime-native@${broken}`, 'cordis'])
  }, 120_000)

  it('installs the helper without any execute bit', () => {
    const { helper } = installedHelper(dir)
    expect(statSync(helper).mode & 0o111).toBe(0)
  })

  it('both runtimes refuse to load, with the path, the mode and the repair', () => {
    const { pkg, helper } = installedHelper(dir)
    const { uid, mode } = statSync(helper)
    expect(loadInstalled(dir)).toEqual(
      refusal(
        helper,
        'not-executable',
        `is not executable (mode 0${(mode & 0o777).toString(8)}, owner uid ${uid}; this process runs as uid ${process.getuid()})`,
        `\`chmod +x ${helper}\`, or reinstall ${PLATFORM_PACKAGE}@${broken} (delete ${pkg} and run \`npm install\` again).`,
      ),
    )
  })

  it('allowUnsandboxed: true loads both as before, and sandbox says no layer holds', () => {
    expect(loadInstalled(dir, { isolate: { allowUnsandboxed: true }, python: { allowUnsandboxed: true } })).toEqual({
      isolate: { containment: 'thread', sandbox: THREAD_SANDBOX, result: ANSWER },
      python: { sandbox: UNSANDBOXED_PYTHON, result: ANSWER },
    })
  })

  it('the repair the message names works: after `chmod +x` both load with every layer', () => {
    const { helper } = installedHelper(dir)
    execFileSync('chmod', ['+x', helper])
    expectEveryLayer(loadInstalled(dir), expect)
  })
})

describe('a platform package published without its helper', () => {
  const { version: broken } = BROKEN.absent
  let dir
  beforeAll(() => {
    dir = userProject('helper-absent', [`code-runtime-native@${broken}`, 'cordis'])
  }, 120_000)

  it('both runtimes refuse to load, saying it is missing and to reinstall the platform package', () => {
    const { pkg, helper } = installedHelper(dir)
    expect(readdirSync(pkg)).not.toContain(HELPER)
    expect(loadInstalled(dir)).toEqual(
      refusal(helper, 'absent', 'is missing', `reinstall ${PLATFORM_PACKAGE}@${broken} (delete ${pkg} and run \`npm install\` again).`),
    )
  })

  it('allowUnsandboxed: true loads both as before, and sandbox says no layer holds', () => {
    expect(loadInstalled(dir, { isolate: { allowUnsandboxed: true }, python: { allowUnsandboxed: true } })).toEqual({
      isolate: { containment: 'thread', sandbox: THREAD_SANDBOX, result: ANSWER },
      python: { sandbox: UNSANDBOXED_PYTHON, result: ANSWER },
    })
  })
})

describe('a sound install whose helper was deleted afterwards', () => {
  it('both runtimes refuse; the reinstall the message names brings the helper and every layer back', () => {
    const dir = userProject('helper-deleted', ['code-runtime-native', 'cordis'])
    const { pkg, helper } = installedHelper(dir)
    rmSync(helper)
    expect(loadInstalled(dir)).toEqual(
      refusal(helper, 'absent', 'is missing', `reinstall ${PLATFORM_PACKAGE}@${version} (delete ${pkg} and run \`npm install\` again).`),
    )
    rmSync(pkg, { recursive: true })
    npm(['install', '--no-audit', '--no-fund'], dir, userEnv)
    expectEveryLayer(loadInstalled(dir), expect)
  }, 120_000)
})
