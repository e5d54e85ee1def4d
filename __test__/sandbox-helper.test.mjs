// The sandbox helper checked at load (lib/sandbox-helper.mjs): where the platform ships one
// (Linux), a helper that is missing, not executable, not a file or does not start makes both
// runtimes refuse to load, with the path, what is wrong and the repair for the layout the addon was
// loaded from; `allowUnsandboxed: true` (and, for isolates, `containment: 'thread'`) loads anyway
// and `sandbox` reports what holds. Each case stages the source-checkout layout (the addon beside
// index.js, the helper beside the addon) with a real addon and a helper made hostile, and loads it
// in a Node process of its own. The installed layout (a platform package from a registry) is in
// packaging.test.mjs.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import os from 'node:os'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Context } from 'cordis'
import { afterAll, describe, expect, it } from 'vitest'
import { IsolateCodeRuntime } from '../lib/index.mjs'
import { runAs, unprivilegedPackage } from './process-helpers.mjs'
import { ANSWER, THREAD_SANDBOX, UNSANDBOXED_PYTHON, expectEveryLayer, hostScript, refusal } from './sandbox-helper-host.mjs'

const REPO = fileURLToPath(new URL('..', import.meta.url))
const linux = process.platform === 'linux'
// The Python suites' interpreter; their helpers probe it at import, so only where one is needed
// (the Windows job has no python3 and no Python backend).
const { PYTHON } = process.platform === 'win32' ? {} : await import('./python-helpers.mjs')
// Every staging directory and run of this file under one private TMPDIR.
const TMP = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), 'crn-sandbox-helper-'))
process.env.TMPDIR = TMP
const HELPER = 'code-runtime-native-sandbox'
const ROLES = 'code-runtime-native-sandbox-roles'
const PYTHON_LIBRARY = 'libcode_runtime_native_python.so'
const ADDON = fs.readdirSync(REPO).find((f) => f.endsWith('.node'))

afterAll(() => fs.rmSync(TMP, { recursive: true, force: true }))

/** The checkout's layout in a fresh folder: its JavaScript, Cargo.toml, the addon and the real helper. */
function stageCheckout(name) {
  const dir = path.join(TMP, name)
  fs.mkdirSync(dir)
  for (const entry of ['package.json', 'index.js', 'lib', 'py', 'Cargo.toml']) {
    fs.cpSync(path.join(REPO, entry), path.join(dir, entry), { recursive: true })
  }
  fs.linkSync(path.join(REPO, ADDON), path.join(dir, ADDON))
  fs.copyFileSync(path.join(REPO, HELPER), path.join(dir, HELPER))
  fs.chmodSync(path.join(dir, HELPER), 0o755)
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'))
  return { dir, helper: path.join(dir, HELPER) }
}

function load(dir, { isolate = {}, python = {} } = {}, lib = undefined) {
  const script = path.join(dir, 'host.mjs')
  fs.writeFileSync(script, hostScript({ isolate, python: { pythonBin: PYTHON, ...python } }, lib))
  const child = spawnSync(process.execPath, [script], { cwd: dir, encoding: 'utf8', timeout: 60_000, env: { ...process.env, TMPDIR: TMP } })
  expect(child.stderr).toBe('')
  return JSON.parse(child.stdout)
}

const BUILD = 'it is not built in this source checkout: run `npm run build`, which builds it with the addon and places it beside the addon (scripts/place-sandbox-helper.mjs).'

describe.runIf(linux)('a source checkout whose helper is unusable', () => {
  it('a built checkout loads both runtimes with every layer (the staging itself is sound)', () => {
    const { dir } = stageCheckout('built')
    expectEveryLayer(load(dir), expect)
  })

  it('not built (absent): both refuse, saying to build it', () => {
    const { dir, helper } = stageCheckout('absent')
    fs.rmSync(helper)
    expect(load(dir)).toEqual(refusal(helper, 'absent', 'is missing', BUILD))
  })

  it('not executable (mode 0644): both refuse with the mode and `chmod +x`', () => {
    const { dir, helper } = stageCheckout('not-executable')
    fs.chmodSync(helper, 0o644)
    expect(load(dir)).toEqual(
      refusal(
        helper,
        'not-executable',
        `is not executable (mode 0644, owner uid ${process.getuid()}; this process runs as uid ${process.getuid()})`,
        `\`chmod +x ${helper}\`, or place it again with \`node scripts/place-sandbox-helper.mjs\`.`,
      ),
    )
  })

  it('a directory in its place: both refuse', () => {
    const { dir, helper } = stageCheckout('directory')
    fs.rmSync(helper)
    fs.mkdirSync(helper)
    expect(load(dir)).toEqual(refusal(helper, 'not-a-file', 'is not a file', 'rebuild it with `npm run build`.'))
  })

  it('cut short (a truncated copy): both refuse, saying how it ended', () => {
    const { dir, helper } = stageCheckout('truncated')
    fs.truncateSync(helper, 65536)
    const out = load(dir)
    for (const name of ['isolate', 'python']) {
      expect(out[name].error).toMatchObject({ code: 'ERR_CODE_RUNTIME_NATIVE_SANDBOX_HELPER', path: helper, problem: 'fails-to-start' })
      expect(out[name].error.message).toMatch(
        /the sandbox helper \S+ does not start as the helper does \(run with no arguments it must exit with 125; it was killed by SIG(SEGV|BUS)\), so .* Repair the install: rebuild it with `npm run build`\./,
      )
    }
  })

  it('whose loader is missing (ENOENT from exec): both refuse, saying it does not start', () => {
    const { dir, helper } = stageCheckout('no-loader')
    fs.writeFileSync(helper, '#!/nonexistent/ld.so\n')
    expect(load(dir)).toEqual(refusal(helper, 'fails-to-start', `does not start (spawnSync ${helper} ENOENT)`, 'rebuild it with `npm run build`.'))
  })

  it('a program that is not the helper: both refuse with its exit status and first line', () => {
    const { dir, helper } = stageCheckout('impostor')
    fs.writeFileSync(helper, '#!/bin/sh\necho "error while loading shared libraries: libfoo.so" >&2\nexit 127\n')
    expect(load(dir)).toEqual(
      refusal(
        helper,
        'fails-to-start',
        'does not start as the helper does (run with no arguments it must exit with 125; it exited with 127: error while loading shared libraries: libfoo.so)',
        'rebuild it with `npm run build`.',
      ),
    )
  })

  it('allowUnsandboxed: true loads both without it, and sandbox says nothing holds', () => {
    const { dir, helper } = stageCheckout('opt-out')
    fs.chmodSync(helper, 0o644)
    const out = load(dir, { isolate: { allowUnsandboxed: true }, python: { allowUnsandboxed: true } })
    expect(out).toEqual({
      isolate: { containment: 'thread', sandbox: THREAD_SANDBOX, result: ANSWER },
      python: { sandbox: UNSANDBOXED_PYTHON, result: ANSWER },
    })
  })

  it('allowUnsandboxed cannot help Python while an executable file that does not start is there: the addon would start every child through it', () => {
    const { dir, helper } = stageCheckout('opt-out-impostor')
    fs.writeFileSync(helper, '#!/bin/sh\nexit 127\n')
    const out = load(dir, { isolate: { allowUnsandboxed: true }, python: { allowUnsandboxed: true } })
    expect(out.isolate).toEqual({ containment: 'thread', sandbox: THREAD_SANDBOX, result: ANSWER })
    expect(out.python).toEqual({
      error: {
        message:
          `code-runtime-native: the sandbox helper ${helper} does not start as the helper does (run with no arguments it must exit with 125; it exited with 127), ` +
          'so every Python run would fail: the addon starts each child through that file, which `allowUnsandboxed` cannot change. ' +
          'Repair the install: rebuild it with `npm run build`. To run without the sandbox on purpose, remove that file and keep `allowUnsandboxed: true`.',
        code: 'ERR_CODE_RUNTIME_NATIVE_SANDBOX_HELPER',
        path: helper,
        problem: 'fails-to-start',
      },
    })
    // Removed, as the message says: Python runs unsandboxed, as allowed.
    fs.rmSync(helper)
    expect(load(dir, { isolate: { allowUnsandboxed: true }, python: { allowUnsandboxed: true } }).python).toEqual({ sandbox: UNSANDBOXED_PYTHON, result: ANSWER })
  })

  it("containment: 'thread' needs no helper; an explicit 'process' needs it even with allowUnsandboxed", () => {
    const { dir, helper } = stageCheckout('containment')
    fs.rmSync(helper)
    const thread = load(dir, { isolate: { containment: 'thread' }, python: { allowUnsandboxed: true } })
    expect(thread).toEqual({
      isolate: { containment: 'thread', sandbox: THREAD_SANDBOX, result: ANSWER },
      python: { sandbox: UNSANDBOXED_PYTHON, result: ANSWER },
    })
    const process = load(dir, { isolate: { containment: 'process', allowUnsandboxed: true }, python: { allowUnsandboxed: true } })
    expect(process.isolate).toEqual({
      error: {
        message:
          `code-runtime-native: the sandbox helper ${helper} is missing, so containment 'process' cannot start sandbox processes. ` +
          `Repair the install: ${BUILD} To run isolates on the host's threads instead, set \`containment: 'thread'\`.`,
        code: 'ERR_CODE_RUNTIME_NATIVE_SANDBOX_HELPER',
        path: helper,
        problem: 'absent',
      },
    })
  })

  it('refuses a non-boolean allowUnsandboxed: the schemas through cordis, the isolate runtime when constructed directly', () => {
    const { dir } = stageCheckout('config')
    const out = load(dir, { isolate: { allowUnsandboxed: 'yes' }, python: { allowUnsandboxed: 'yes' } })
    expect(out.isolate.error.message).toMatch(/\$\.allowUnsandboxed expected boolean but got yes/)
    expect(out.python.error.message).toMatch(/\$\.allowUnsandboxed expected boolean but got yes/)
    expect(() => new IsolateCodeRuntime(new Context(), { allowUnsandboxed: 'yes' })).toThrow(
      'code-runtime-native: config.allowUnsandboxed must be true or false, got yes',
    )
  })
})

describe.runIf(linux)('a helper the loading user may not execute', () => {
  it('refuses, naming the owner and the uid this process runs as; outside a checkout the repair is to place it', async () => {
    // Root drops to nobody for this case; a non-root suite loads as itself a helper it may not run.
    const root = process.getuid() === 0
    const uid = root ? 65534 : process.getuid()
    const gid = root ? 65534 : process.getgid()
    const dir = fs.mkdtempSync(path.join(TMP, 'other-user-'))
    fs.chownSync(dir, uid, gid)
    fs.chmodSync(TMP, 0o711)
    const { pkg, node } = unprivilegedPackage(REPO, dir, ['py'])
    const helper = path.join(pkg, HELPER)
    fs.chmodSync(helper, root ? 0o744 : 0o644)
    const host = async (allowUnsandboxed) => {
      const script = path.join(pkg, `host-${allowUnsandboxed}.mjs`)
      fs.writeFileSync(script, hostScript({ isolate: { allowUnsandboxed }, python: { pythonBin: '/usr/bin/python3', allowUnsandboxed } }))
      const { code, stdout, stderr } = await runAs(node, script, { uid, gid, cwd: pkg, env: { PATH: '/usr/bin:/bin', TMPDIR: dir } })
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
      return JSON.parse(stdout)
    }
    const mode = root ? '0744' : '0644'
    const says = `is not executable (mode ${mode}, owner uid ${process.getuid()}; this process runs as uid ${uid})`
    const repair = `put the ${HELPER} built with this addon at ${helper}, executable (\`chmod +x ${helper}\`).`
    expect(await host(false)).toEqual(refusal(helper, 'not-executable', says, repair))
    const allowed = await host(true)
    expect(allowed.isolate).toEqual({ containment: 'thread', sandbox: THREAD_SANDBOX, result: ANSWER })
    if (root) {
      // Its owner's execute bit makes it the addon's helper still, and this user cannot run it.
      expect(allowed.python.error).toMatchObject({ path: helper, problem: 'not-executable' })
      expect(allowed.python.error.message).toContain(`${says}, so every Python run would fail: the addon starts each child through that file`)
    } else {
      expect(allowed.python).toEqual({ sandbox: UNSANDBOXED_PYTHON, result: ANSWER })
    }
  })
})

describe.runIf(linux)('the roles a forked interpreter hands the helper (keeper, init, joined-keeper, joined-init)', () => {
  it('refuses, with 125, arguments the addon would not have written', () => {
    const wrong = [
      ['keeper'],
      ['keeper', '1', '-1', '-1'],
      ['keeper', '0', '-1', '-1', '0'],
      ['keeper', '1', '-1', '-1', '2'],
      ['keeper', 'x', '-1', '-1', '0'],
      ['keeper', '1', '-1', '-1', '0', 'label', 'extra'],
      ['init', '5'],
      ['init', '0', '3'],
      ['init', '5', '-1'],
      ['init', '5', '3', 'label', 'extra'],
      ['joined-keeper'],
      ['joined-keeper', '1', '2'],
      ['joined-keeper', '0', '2', '-1'],
      ['joined-keeper', '1', '0', '-1'],
      ['joined-keeper', '1', '2', '-2'],
      ['joined-keeper', 'x', '2', '-1'],
      ['joined-keeper', '1', '2', '-1', 'label', 'extra'],
      ['joined-init'],
      ['joined-init', '3', '4', '5', '-', '-'],
      ['joined-init', 'x', '4', '5', '-', '-', 'exec', '--', 'p'],
      ['joined-init', '3', '4', '-1', '-', '-', 'exec', '--', 'p'],
      ['joined-init', '3', '4', '5', '-', '-', 'exec', '--bogus', '--', 'p'],
      ['joined-init', '3', '4', '5', '7', '-', 'exec', '--', 'p'],
      ['joined-init', '3', '4', '5', '-', '9', 'exec', '--', 'p'],
      ['joined-init', '3', '4', '5', '7', '-', 'exec', '--as-host', '/w', '--', 'p'],
      ['joined-init', '3', '4', '5', '-1', '-1', 'exec', '--as-host', '/w', '--', 'p'],
      ['joined-init', '3', '4', '5', '7,8', '-1', 'exec', '--as-host', '/w', '--', 'p'],
    ]
    for (const file of [HELPER, ROLES]) {
      for (const args of wrong) {
        const r = spawnSync(path.join(REPO, file), args, { encoding: 'utf8', timeout: 10_000 })
        expect([file, args, r.status, r.stderr]).toEqual([file, args, 125, `code-runtime-native-sandbox: ${args[0]}: arguments the addon would not have written\n`])
      }
    }
  })
})

/** Whether the ELF file at `file` names no program interpreter (it starts without the dynamic loader). */
function linkedStatically(file) {
  const bytes = fs.readFileSync(file)
  if (bytes.length < 64 || bytes.readUInt32BE(0) !== 0x7f454c46 || bytes[4] !== 2 || bytes[5] !== 1) return false
  const [offset, size, count] = [Number(bytes.readBigUInt64LE(0x20)), bytes.readUInt16LE(0x36), bytes.readUInt16LE(0x38)]
  if (count === 0 || offset + size * count > bytes.length) return false
  const PT_INTERP = 3
  return Array.from({ length: count }, (_, i) => bytes.readUInt32LE(offset + i * size)).every((type) => type !== PT_INTERP)
}

describe.runIf(linux)("the helper's static build, which a Python spare's keeper and init exec", () => {
  it('is linked statically where the toolchain has glibc\'s static libraries, and the helper is not', () => {
    const libc = spawnSync('cc', ['-print-file-name=libc.a'], { encoding: 'utf8' }).stdout?.trim() ?? ''
    const staticGlibc = path.isAbsolute(libc) && fs.existsSync(libc)
    expect([linkedStatically(path.join(REPO, ROLES)), linkedStatically(path.join(REPO, HELPER))]).toEqual([staticGlibc, false])
    // The check itself: a script and a truncated header are no static program.
    const script = path.join(TMP, 'script')
    fs.writeFileSync(script, '#!/bin/sh\n'.padEnd(128, '#'))
    expect(linkedStatically(script)).toBe(false)
    fs.writeFileSync(script, fs.readFileSync(path.join(REPO, ROLES)).subarray(0, 70))
    expect(linkedStatically(script)).toBe(false)
  })

  it('refuses, with 125, to be a contained isolate\'s process (it cannot load the addon); unlinked statically, it is the helper itself', () => {
    const roles = path.join(REPO, ROLES)
    if (!linkedStatically(roles)) {
      expect(fs.readFileSync(roles).equals(fs.readFileSync(path.join(REPO, HELPER)))).toBe(true)
      return
    }
    const r = spawnSync(roles, ['isolate', path.join(REPO, ADDON), '64'], { encoding: 'utf8', timeout: 10_000 })
    expect([r.status, r.stderr]).toEqual([
      125,
      'code-runtime-native-sandbox: this static build cannot load the addon; a contained isolate starts through code-runtime-native-sandbox\n',
    ])
  })

  it('is not used when it does not start as the helper does, nor joined when it is not static: Python runs go through the helper, every layer holding', () => {
    for (const [name, plant] of [
      ['roles-truncated', (file) => fs.truncateSync(file, 65536)],
      ['roles-not-elf', (file) => fs.writeFileSync(file, '#!/bin/sh\nexit 0\n')],
      ['roles-missing', (file) => fs.rmSync(file)],
      // A program that starts, and is not the helper; one that never answers (its check ends).
      ['roles-other-program', (file) => fs.copyFileSync(fs.realpathSync('/bin/true'), file)],
      ['roles-never-answers', (file) => fs.writeFileSync(file, '#!/bin/sh\nexec sleep 600\n')],
      // The helper itself, linked dynamically: it serves the roles, but a keeper that joined the
      // run's namespaces could not exec it in the run's root (no loader need be there), so the
      // spare's keeper and init keep enter.rs's chain (`keeper`, not `joined-keeper`).
      ['roles-dynamic', (file) => fs.copyFileSync(path.join(REPO, HELPER), file)],
    ]) {
      const { dir } = stageCheckout(name)
      // The Python template's library too: only a run forked from the template has a keeper
      // that execs the roles file.
      fs.copyFileSync(path.join(REPO, PYTHON_LIBRARY), path.join(dir, PYTHON_LIBRARY))
      const roles = path.join(dir, ROLES)
      fs.copyFileSync(path.join(REPO, ROLES), roles)
      fs.chmodSync(roles, 0o755)
      plant(roles)
      // Runs in a row, apart, then what the waiting spare's keeper became (a descendant of this
      // host, through its template): the helper, not the planted file, nor a copy of the
      // interpreter that kept the role because its exec failed.
      const script = path.join(dir, 'runs.mjs')
      fs.writeFileSync(script, `
        import fs from 'node:fs'
        import { Context } from 'cordis'
        import { PythonCodeRuntime } from './lib/index.mjs'
        const ctx = new Context()
        await ctx.plugin(PythonCodeRuntime, { pythonBin: ${JSON.stringify(PYTHON)} })
        const results = []
        for (let i = 0; i < 3; i++) {
          await new Promise((resolve) => setTimeout(resolve, 150))
          results.push(await ctx.codeRuntime.run({ program: 'return 6 * 7', bindings: [] }))
        }
        const read = (pid, what) => { try { return fs.readFileSync('/proc/' + pid + '/' + what, 'utf8') } catch { return '' } }
        const parent = (pid) => Number(read(pid, 'stat').split(') ')[1]?.split(' ')[1])
        const mine = (pid) => { for (let i = 0; i < 8 && pid > 1; i++) if ((pid = parent(pid)) === process.pid) return true; return false }
        let keepers = []
        for (let i = 0; i < 100 && keepers.length === 0; i++) {
          await new Promise((resolve) => setTimeout(resolve, 20))
          const pids = fs.readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d))
          keepers = pids
            .filter((pid) => read(pid, 'cmdline').split('\\0')[1] === 'keeper' && mine(pid))
            .map((pid) => fs.readlinkSync('/proc/' + pid + '/exe'))
        }
        process.stdout.write(JSON.stringify({ results, keepers, sandbox: ctx.codeRuntime.sandbox }))
        process.exit(0)
      `)
      const child = spawnSync(process.execPath, [script], { cwd: dir, encoding: 'utf8', timeout: 60_000, env: { ...process.env, TMPDIR: TMP } })
      expect([name, child.stderr]).toEqual([name, ''])
      const out = JSON.parse(child.stdout)
      expect([name, out.results]).toEqual([name, Array(3).fill(ANSWER)])
      // One spare or two may wait; each keeper is the helper (the dynamic copy: that file).
      const keeper = name === 'roles-dynamic' ? roles : path.join(dir, HELPER)
      expect([name, [...new Set(out.keepers)]]).toEqual([name, [fs.realpathSync(keeper)]])
      expect(out.sandbox).toMatchObject({ helper: true, namespaces: true, seccomp: true, processCap: true })
    }
  })
})

describe.runIf(!linux)('a platform that ships no helper', () => {
  it('loads both runtimes without one, with no error (Windows: no Python backend at all)', () => {
    // This checkout's own addon: off Linux none is placed beside it.
    const dir = path.join(TMP, 'no-helper')
    fs.mkdirSync(dir)
    fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'junction')
    const out = load(dir, {}, pathToFileURL(path.join(REPO, 'lib', 'index.mjs')).href)
    expect(out.isolate).toEqual({ containment: 'thread', sandbox: THREAD_SANDBOX, result: ANSWER })
    if (process.platform === 'win32') {
      expect(out.python.error.message).toMatch(/this backend requires a Unix platform/)
    } else {
      expect(out.python.result).toEqual(ANSWER)
      expect(out.python.sandbox).toEqual(UNSANDBOXED_PYTHON)
    }
  })
})
