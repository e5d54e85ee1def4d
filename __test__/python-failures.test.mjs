// PythonCodeRuntime's plumbing failures, reached for real (docs/acceptance.md, cases 19–23, the
// number at the end of a title; and the staging, spawn and limit rows of docs/failures.md#python):
// fake interpreters that close fd 3 or vanish, a child Node process with its descriptors exhausted
// or its file size limited or its address space capped, and the event loop left idle after a run.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { PythonCodeRuntime } from '../lib/index.mjs'
import { PYTHON, TOOLS, URLS, childJson, fakePython, isAlive, liveProcesses, load, privateTmpdir, pythonTemplates, runNode, script, sleep, stagingDirs, unreapedChildren, startTime } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 20_000, hookTimeout: 20_000 })
const TMP = privateTmpdir('py-failures')
const BINS = fs.mkdtempSync(path.join(TMP, 'bins-'))

afterAll(() => {
  expect(liveProcesses(TMP)).toEqual([])
  expect(unreapedChildren()).toEqual([])
  expect(stagingDirs(TMP)).toEqual([])
  fs.rmSync(TMP, { recursive: true, force: true })
})

/** Runs `program` with a runtime whose interpreter is `bin`. */
async function runWith(bin, program, bindings = [], config = {}) {
  const { runtime, fiber } = await load(PythonCodeRuntime, { pythonBin: bin, graceMs: 300, ...config })
  try {
    return await runtime.run({ program, bindings })
  } finally {
    await fiber.dispose()
  }
}

/** A namespace whose boot frame is far larger than a socket buffer. */
function hugeNamespace() {
  const functions = {}
  for (let i = 0; i < 100_000; i++) functions[`function_number_${i}`] = async () => i
  return TOOLS(functions)
}

describe('boot failures', () => {
  it('a child that exits without reading fd 3 fails the boot write: worker-exit, no leak (19)', async () => {
    const bin = fakePython(BINS, 'exits-at-once', { run: 'exit 0' })
    const before = stagingDirs(TMP).length
    const r = await runWith(bin, 'return 1', [hugeNamespace()])
    expect(r).toEqual({ logs: [], error: { kind: 'worker-exit', message: 'failed to boot python subprocess: write EPIPE: python exited (code=0, signal=null)' } })
    expect(stagingDirs(TMP).length).toBe(before)
  })

  it('a failing run write after boot-ack is a boot failure too (21)', async () => {
    const child = 'import os\nbuf = b""\nwhile b"\\n" not in buf:\n    buf += os.read(3, 65536)\nos.write(3, b\'{"type":"boot-ack"}\\n\')\nos._exit(0)'
    const bin = fakePython(BINS, 'acks-then-exits', { run: `exec ${PYTHON} -c '${child.replaceAll("'", "'\\''")}'` })
    const r = await runWith(bin, `return ${JSON.stringify('x'.repeat(4 << 20))}`)
    expect(r).toEqual({ logs: [], error: { kind: 'worker-exit', message: 'failed to boot python subprocess: write EPIPE: python exited (code=0, signal=null)' } })
  })

  it('run is written with boot, not after a boot-ack: a child that never acknowledges still gets its program', async () => {
    // Reads two lines (boot, then run) without answering the first, and returns the program it got.
    const child = [
      'import json, os',
      'buf = b""',
      'while buf.count(b"\\n") < 2:',
      '    chunk = os.read(3, 65536)',
      '    if not chunk: os._exit(9)',
      '    buf += chunk',
      'boot, run = (json.loads(line) for line in buf.split(b"\\n")[:2])',
      'value = [boot["type"], run["type"], run["program"]]',
      'os.write(3, json.dumps({"type": "done", "value": value}).encode() + b"\\n")',
      'os._exit(0)',
    ].join('\n')
    const bin = fakePython(BINS, 'never-acks', { template: false, run: `exec ${PYTHON} -c '${child.replaceAll("'", "'\\''")}'` })
    const r = await runWith(bin, 'return 7', [], { maxWallMs: 5000 })
    expect(r).toEqual({ logs: [], value: ['boot', 'run', 'return 7'] })
  })

  it('a bootstrap that sees no boot frame raises, sends no done, and the host reports the exit', async () => {
    // fd 3 is /dev/null in the child: the boot frame is never seen.
    const bin = fakePython(BINS, 'no-fd3', { run: `sleep 0.3\nexec ${PYTHON} "$@" 3</dev/null` })
    const r = await runWith(bin, 'return 1')
    expect(r.error).toEqual({ kind: 'worker-exit', message: 'python exited (code=1, signal=null) before completing' })
    expect(r.logs.at(-1)).toBe('RuntimeError: bootstrap: expected boot frame on fd 3')
  })

  it('an interpreter that disappears after load: runs go on from the template; once it is gone too, an asynchronous spawn error (22)', async () => {
    const bin = fakePython(BINS, 'vanishing-python', { run: `exec ${PYTHON} "$@"` })
    const { runtime, fiber } = await load(PythonCodeRuntime, { pythonBin: bin })
    fs.unlinkSync(bin)
    const before = stagingDirs(TMP).length
    // The template started at load: it forks runs without the file.
    expect(await runtime.run({ program: 'return 1', bindings: [] })).toEqual({ logs: [], value: 1 })
    const [template] = pythonTemplates()
    expect(template).toBeGreaterThan(0)
    process.kill(template, 'SIGKILL')
    while (isAlive(template)) await sleep(10)
    // The spare it forked is gone with it (its exit pipe ended); starting another template, and
    // then the run's own interpreter, finds no file.
    expect(await runtime.run({ program: 'return 1', bindings: [] })).toEqual({
      logs: [],
      error: { kind: 'worker-exit', message: `python spawn error: spawn ${bin} ENOENT` },
    })
    // Disposal also waits for a spare that was booting for the next run.
    await fiber.dispose()
    expect(stagingDirs(TMP).length).toBe(before)
  })

  it('spawn failing synchronously with EMFILE resolves worker-exit and removes the staging directory (20)', async () => {
    const dir = fs.mkdtempSync(path.join(TMP, 'emfile-'))
    const tmp = fs.mkdtempSync(path.join(TMP, 'emfile-tmp-'))
    const out = await runNode(
      dir,
      `
      import fs from 'node:fs'
      import { Context } from '${URLS.cordis}'
      import { PythonCodeRuntime } from '${URLS.index}'
      const ctx = new Context()
      const fiber = await ctx.plugin(PythonCodeRuntime, { pythonBin: ${JSON.stringify(PYTHON)} })
      const held = []
      try { for (;;) held.push(fs.openSync('/dev/null', 'r')) } catch (e) { if (e.code !== 'EMFILE') throw e }
      // Four left: the run's waker pair takes two and the staging copy two at a time, so the
      // spawn's pipes are what runs out.
      for (let i = 0; i < 4; i++) fs.closeSync(held.pop())
      const r = await ctx.codeRuntime.run({ program: 'return 1', bindings: [] })
      for (const fd of held) fs.closeSync(fd)
      // Nothing of the run is left, nor (after dispose) of a spare booting for the next one.
      await fiber.dispose()
      console.log(JSON.stringify({ r, left: fs.readdirSync(${JSON.stringify(tmp)}) }))
      `,
      { env: { TMPDIR: tmp }, shellPrefix: 'ulimit -n 64;' },
    )
    const { r, left } = childJson(out)
    expect(r).toEqual({ logs: [], error: { kind: 'worker-exit', message: 'python spawn error: spawn EMFILE' } })
    expect(left).toEqual([])
  })
})

// docs/python.md#staging
describe('staging failures', () => {
  it('a tmpdir that does not exist: a spawned child cannot be staged; a child forked into a root of its own needs nothing there', async () => {
    const spawning = fakePython(BINS, 'no-template-staging', { run: `exec ${PYTHON} "$@"`, template: false })
    const spawned = await load(PythonCodeRuntime, { pythonBin: spawning })
    const forked = await load(PythonCodeRuntime)
    const saved = process.env.TMPDIR
    const missing = path.join(TMP, 'does-not-exist')
    process.env.TMPDIR = missing
    try {
      expect(await spawned.runtime.run({ program: 'return 1', bindings: [] })).toEqual({
        logs: [],
        error: {
          kind: 'worker-exit',
          // Staging directories are named after the host process (pid and start time), so a later
          // host can remove what a dead one left.
          message: `failed to stage the python bootstrap: ENOENT: no such file or directory, mkdtemp '${missing}/code-runtime-native-python-${process.pid}-${startTime(process.pid)}-XXXXXX'`,
        },
      })
      // `TMPDIR` is read per run, so this run boots its own child (the spare was made for the
      // old one). A forked run's directory is only a name in its own root
      // (docs/python.md#staging): nothing needs to exist on the host, and nothing is made there.
      const { namespaces, privateRoot } = forked.runtime.sandbox
      const program = [
        'import os, tempfile',
        'home = os.path.dirname(tempfile.gettempdir())',
        'try:',
        '    open(os.path.join(home, "planted"), "w")',
        '    wrote = "wrote"',
        'except OSError as e:',
        '    wrote = e.strerror',
        'return [os.path.isdir(tempfile.gettempdir()), os.getcwd() == tempfile.gettempdir(), os.listdir(home), wrote]',
      ].join('\n')
      const ran = await forked.runtime.run({ program, bindings: [] })
      if (namespaces && privateRoot) expect(ran).toEqual({ logs: [], value: [true, true, ['tmp'], 'Read-only file system'] })
      else expect(ran.error?.message).toMatch(/^failed to stage the python bootstrap: ENOENT/)
    } finally {
      process.env.TMPDIR = saved
    }
    await spawned.fiber.dispose()
    await forked.fiber.dispose()
    expect(fs.existsSync(missing)).toBe(false)
  })

  it('a staging write that fails removes the partial directory (file size limit, SIGXFSZ ignored)', async () => {
    const dir = fs.mkdtempSync(path.join(TMP, 'efbig-'))
    const tmp = fs.mkdtempSync(path.join(TMP, 'efbig-tmp-'))
    const out = await runNode(
      dir,
      `
      import fs from 'node:fs'
      import { Context } from '${URLS.cordis}'
      import { PythonCodeRuntime } from '${URLS.index}'
      const ctx = new Context()
      const fiber = await ctx.plugin(PythonCodeRuntime, { pythonBin: ${JSON.stringify(PYTHON)} })
      const r = await ctx.codeRuntime.run({ program: 'return 1', bindings: [] })
      // Disposal also waits for a spare that was booting for the next run.
      await fiber.dispose()
      console.log(JSON.stringify({ r, left: fs.readdirSync(${JSON.stringify(tmp)}) }))
      `,
      { env: { TMPDIR: tmp }, shellPrefix: "ulimit -f 0; trap '' XFSZ;" },
    )
    const { r, left } = childJson(out)
    expect(r.error.kind).toBe('worker-exit')
    // The scripts come from the addon itself, written into each run's directory.
    expect(r.error.message).toMatch(/^failed to stage the python bootstrap: EFBIG: file too large, write '.*\/code-runtime-native-python-\d+-\d+-\w{6}\/bootstrap\.py'$/)
    expect(left).toEqual([])
  })
})

// docs/python.md#exceptions
describe('limits failing at boot', () => {
  it('an inherited RLIMIT_AS too small for the budgets is reported by the bootstrap', async () => {
    // The interpreter inherits a smaller address space than the config asks for (a wrapper lowers
    // it after the host's pre-exec setup); the host itself keeps its own limits.
    const bin = fakePython(BINS, 'small-address-space', { run: `ulimit -v 800000\nexec ${PYTHON} "$@"` })
    const { runtime, fiber } = await load(PythonCodeRuntime, { pythonBin: bin, addressSpaceMb: 4096, maxValueBytes: 67108800 })
    expect(await runtime.run({ program: 'return 1', bindings: [] })).toEqual({
      logs: [],
      error: {
        kind: 'exception',
        message:
          'bootstrap: applying resource limits failed\nRuntimeError: config.maxValueBytes is too large for the inherited RLIMIT_AS of 819200000 bytes (a near-budget output would breach it during encode); lower the budget or raise the inherited address-space limit',
      },
    })
    await fiber.dispose()
  })

  it("a child that said why and went before the host wrote its run's frames is heard: its word, not the write's failure", async () => {
    // The bootstrap reports a failure at once and exits; the host's write may then find the
    // channel closed (EPIPE), with the child's frame already waiting in the socket. A program
    // larger than the socket's buffer makes sure of it: the rest of its frame is written later.
    const said = { kind: 'exception', message: 'bootstrap: it said why before it went' }
    const bin = fakePython(BINS, 'says-and-goes', { template: false, run: `printf '%s\\n' '${JSON.stringify({ type: 'done', error: said })}' >&3\nexit 0` })
    const { runtime, fiber } = await load(PythonCodeRuntime, { pythonBin: bin, graceMs: 300 })
    try {
      const program = `# ${'x'.repeat(600_000)}\nreturn 1`
      for (let i = 0; i < 5; i++) expect(await runtime.run({ program, bindings: [] })).toEqual({ logs: [], error: said })
    } finally {
      await fiber.dispose()
    }
  })

  it('the host applies the limits before exec and the child sees them', async () => {
    // The wrapper runs after the host's pre-exec setup and before the interpreter starts; it can
    // write nowhere on the host, so it reports on stderr, which the run captures as a log entry.
    // Without a template (this wrapper refuses to be one), so it runs before each run's interpreter.
    const bin = fakePython(BINS, 'limit-reporter', {
      run: `echo "limits $(ulimit -c) $(ulimit -St) $(ulimit -Ht) $(ulimit -Sv) $(ulimit -Hv)" >&2\nexec ${PYTHON} "$@"`,
      template: false,
    })
    const { runtime, fiber } = await load(PythonCodeRuntime, { pythonBin: bin, cpuSeconds: 7, addressSpaceMb: 300 })
    const r = await runtime.run({
      program: 'import resource\nreturn [list(resource.getrlimit(r)) for r in (resource.RLIMIT_CORE, resource.RLIMIT_CPU, resource.RLIMIT_AS)]',
      bindings: [],
    })
    expect(r.value).toEqual([[0, 0], [7, 8], [300 * 2 ** 20, 300 * 2 ** 20]])
    expect(r.logs).toEqual([`limits 0 7 8 ${300 * 1024} ${300 * 1024}`])
    await fiber.dispose()
  })
})

// docs/python.md#spawn
describe('the child process', () => {
  it('inherits only fds 0–3, stdin at EOF, and runs in its own session', async () => {
    const probe = 'import os, sys\nprint(sorted(os.listdir("/proc/self/fd")), repr(sys.stdin.read()), os.getsid(0) == os.getpid(), os.getpgrp() == os.getpid())'
    const bin = fakePython(BINS, 'fd-lister', { run: `exec ${PYTHON} -c '${probe}'` })
    const r = await runWith(bin, 'return 1')
    expect(r.error).toEqual({ kind: 'worker-exit', message: 'python exited (code=0, signal=null) before completing' })
    // 4 is the descriptor listdir itself opened.
    expect(r.logs).toEqual(["['0', '1', '2', '3', '4'] '' True True"])
  })
})

describe('nothing outlives a run', () => {
  it('a host that exits mid-run takes the process group and the staging directory with it', async () => {
    const dir = fs.mkdtempSync(path.join(TMP, 'exit-'))
    const tmp = fs.mkdtempSync(path.join(TMP, 'exit-tmp-'))
    const out = await runNode(
      dir,
      `
      import { Context } from '${URLS.cordis}'
      import { PythonCodeRuntime } from '${URLS.index}'
      import { liveProcesses } from '${URLS.helpers}'
      const ctx = new Context()
      await ctx.plugin(PythonCodeRuntime, { pythonBin: ${JSON.stringify(PYTHON)} })
      const marker = ${JSON.stringify(tmp)} + '/marker'
      const program = 'import os, time\\npid = os.fork()\\nif pid == 0:\\n    os.execv("/bin/sh", ["sh", "-c", "sleep 60; :", ' + JSON.stringify(marker) + '])\\ntime.sleep(60)'
      ctx.codeRuntime.run({ program, bindings: [] })
      // The program's child (a shell, whose $0 is the marker) carries it in its command line.
      while (liveProcesses(marker).length < 1) await new Promise((r) => setTimeout(r, 20))
      process.exit(0)
      `,
      { env: { TMPDIR: tmp } },
    )
    expect(out.code).toBe(0)
    for (let i = 0; i < 50 && liveProcesses(tmp).length > 0; i++) await new Promise((r) => setTimeout(r, 20))
    expect(liveProcesses(tmp)).toEqual([])
    expect(fs.readdirSync(tmp)).toEqual([])
  })

  it('a settled run leaves nothing that keeps the event loop alive', async () => {
    const dir = fs.mkdtempSync(path.join(TMP, 'idle-'))
    const out = await runNode(
      dir,
      `
      import { Context } from '${URLS.cordis}'
      import { PythonCodeRuntime } from '${URLS.index}'
      const ctx = new Context()
      await ctx.plugin(PythonCodeRuntime, { pythonBin: ${JSON.stringify(PYTHON)} })
      const tools = { global: 'tools', functions: { echo: async (x) => x } }
      const logs = []
      const r = await ctx.codeRuntime.run({ program: 'print("hi")\\nreturn await tools.echo(5)', bindings: [tools], onLog: (t) => logs.push(t) })
      console.log(JSON.stringify({ r, logs, at: Date.now() }))
      process.on('exit', () => console.error('exit-at', Date.now()))
      `,
    )
    const { r, logs, at } = childJson(out)
    expect(r).toEqual({ logs: ['hi'], value: 5 })
    expect(logs).toEqual(['hi'])
    expect(out.code).toBe(0)
    const exitedAt = Number(out.stderr.match(/exit-at (\d+)/)[1])
    expect(exitedAt - at).toBeLessThan(500)
  })
})
