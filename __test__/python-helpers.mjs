// Shared helpers for the PythonCodeRuntime suites: a private TMPDIR per test file (so staging
// directories and child command lines are attributable to it), real interpreters, fake ones for
// failure paths, and a process-table check.
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Context } from 'cordis'

export const REPO = fileURLToPath(new URL('..', import.meta.url))

/** Absolute module URLs for child Node scripts written outside the repository. */
export const URLS = {
  cordis: pathToFileURL(createRequire(import.meta.url).resolve('cordis')).href,
  index: pathToFileURL(path.join(REPO, 'lib/index.mjs')).href,
  pythonRuntime: pathToFileURL(path.join(REPO, 'lib/python-runtime.mjs')).href,
  helpers: pathToFileURL(path.join(REPO, '__test__/python-helpers.mjs')).href,
}

/** Parses a child's JSON stdout, reporting its stderr when it did not print any. */
export function childJson(out) {
  try {
    return JSON.parse(out.stdout)
  } catch {
    throw new Error(`child exited ${out.code}/${out.signal} without JSON; stderr:\n${out.stderr}`)
  }
}

/** The real interpreter behind `python3` on PATH (a pyenv shim on this machine), or another
 * CPython named by CRN_TEST_PYTHON (to run the suites against 3.10, 3.12, …). */
const realInterpreter = (bin) => execFileSync(bin, ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim()
export const PATH_PYTHON = realInterpreter('python3')
export const PYTHON = process.env.CRN_TEST_PYTHON ? realInterpreter(process.env.CRN_TEST_PYTHON) : PATH_PYTHON

/** The real interpreter's installation prefixes, as its version probe reports them. */
const PREFIXES = execFileSync(PYTHON, ['-c', 'import sys; print(sys.prefix); print(sys.base_prefix)'], { encoding: 'utf8' })
  .trim()
  .split('\n')

/**
 * A fake interpreter's answer to the version probe: `version`, an empty sys.executable line (so
 * runs spawn the fake itself), and the real interpreter's prefixes (what a sandboxed child may
 * read, since the fake execs the real interpreter).
 */
export const probeAnswer = (version) => `printf '${[version, '', ...PREFIXES].join('\\n')}\\n'`

/** The system's temporary directory, read before any test file gives itself its own. */
const SYSTEM_TMPDIR = fs.realpathSync(os.tmpdir())

/**
 * Gives this test file its own TMPDIR, in the system's (whatever the file set before). Every run
 * stages under it, so a child's command line (`…/<tag>-XXXX/code-runtime-native-python-…/
 * bootstrap.py`) says which file spawned it. The caller removes it when its runtimes are gone.
 */
export function privateTmpdir(tag) {
  const dir = fs.mkdtempSync(path.join(SYSTEM_TMPDIR, `crn-${tag}-`))
  process.env.TMPDIR = dir
  return dir
}

export async function load(Class, config = {}) {
  const ctx = new Context()
  const fiber = await ctx.plugin(Class, { pythonBin: PYTHON, ...config })
  return { ctx, fiber, runtime: ctx.get('codeRuntime') }
}

export const TOOLS = (functions = {}) => ({
  global: 'tools',
  errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' },
  functions,
})

/**
 * Non-zombie processes whose command line contains `marker`; `templates: false` leaves out the
 * runtimes' Python templates (docs/python.md#the-template: this process's direct children running
 * `template.py`, which live as long as their runtime and never run a program).
 */
export function liveProcesses(marker, { templates = true } = {}) {
  const found = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    let cmdline, stat
    try {
      cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ')
      stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8')
    } catch {
      continue
    }
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    if (!templates && ppid === process.pid && TEMPLATE_SCRIPT.test(cmdline)) continue
    if (cmdline.includes(marker) && state !== 'Z' && state !== 'X') found.push({ pid: Number(name), state, cmdline })
  }
  return found
}

const TEMPLATE_SCRIPT = /\/template\.py /

/** The Python templates of this process's runtimes (live ones), by pid. */
export function pythonTemplates() {
  return liveProcesses('template.py').filter((p) => TEMPLATE_SCRIPT.test(p.cmdline) && parentOf(p.pid) === process.pid).map((p) => p.pid)
}

function parentOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return 0
  }
}

/** Zombies whose parent is this process: a child the host failed to reap. */
export function unreapedChildren() {
  const found = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8')
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (state === 'Z' && Number(ppid) === process.pid) found.push(Number(name))
    } catch {}
  }
  return found
}

export function isAlive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

/** A process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22). */
export function startTime(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19])
}

/** Staging directories currently under `dir`. */
export function stagingDirs(dir) {
  return fs.readdirSync(dir).filter((n) => n.startsWith('code-runtime-native-python-'))
}

/** Writes an executable script. */
export function script(dir, name, body) {
  const file = path.join(dir, name)
  fs.writeFileSync(file, body, { mode: 0o755 })
  return file
}

/**
 * A fake interpreter: answers the version probe with `version` (and an empty sys.executable line,
 * so runs spawn the script itself), then runs `run` for the per-run invocation. `template: false`
 * makes it refuse to start the runtime's Python template (it exits at once), so every run spawns
 * it: what a wrapper does before each interpreter starts is then seen by each run.
 */
export function fakePython(dir, name, { version = 'cpython 3 11 7', probe, run = 'exit 0', template = true } = {}) {
  const probeBody = probe ?? `${probeAnswer(version)}; exit 0`
  const refuse = template ? '' : 'case "$3" in */template.py) exit 3;; esac\n'
  return script(dir, name, `#!/bin/sh\nif [ "$1" = "-I" ] && [ "$2" = "-c" ]; then\n${probeBody}\nfi\n${refuse}${run}\n`)
}

/** Runs a Node ESM script (text) in a child process with the given environment and shell prefix. */
export function runNode(dir, source, { env = {}, shellPrefix = '', nodeArgs = [], cwd = REPO } = {}) {
  const file = path.join(dir, `child-${Date.now()}-${Math.random().toString(36).slice(2)}.mjs`)
  fs.writeFileSync(file, source)
  const cmd = `${shellPrefix} exec "${process.execPath}" ${nodeArgs.join(' ')} "${file}"`
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', cmd], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
