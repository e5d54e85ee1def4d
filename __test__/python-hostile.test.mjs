// PythonCodeRuntime against hostile and runaway programs: forged fd-3 traffic, frame and backlog
// caps, CPU and wall limits, memory bombs, process-group teardown (fork storms, SIGTERM-ignoring
// and setsid-escaping descendants), rebinding the bootstrap, exceptions, exits and disposal
// (docs/acceptance.md, cases 53–62: a number in parentheses at the end of a title).
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { PythonCodeRuntime } from '../lib/index.mjs'
import { loopTurns } from './helpers.mjs'
import { TOOLS, liveProcesses, load, privateTmpdir, sleep, stagingDirs, unreapedChildren } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 20_000, hookTimeout: 20_000 })
const TMP = privateTmpdir('py-hostile')

let R
let fiber
beforeAll(async () => {
  ;({ runtime: R, fiber } = await load(PythonCodeRuntime, { graceMs: 300 }))
})
afterAll(async () => {
  await fiber.dispose()
  expect(liveProcesses(TMP)).toEqual([])
  expect(unreapedChildren()).toEqual([])
  expect(stagingDirs(TMP)).toEqual([])
  fs.rmSync(TMP, { recursive: true, force: true })
})

const run = (program, bindings = [], extra = {}) => R.run({ program, bindings, ...extra })
/** Tracebacks as CPython renders them, without the position carets newer versions add. */
const noCarets = (message) => message.replace(/\n *[~^]+ *(?=\n)/g, '')

// docs/protocol.md#reading-hostile-frames
describe('hostile fd-3 traffic', () => {
  it('junk, invalid UTF-8, unsafe integers and malformed frames are dropped; real calls still work (53)', async () => {
    const seen = []
    const functions = { echo: async (x) => (seen.push(x), x) }
    const program = String.raw`
import os
for junk in [
    b"garbage\n", b"\xff\xfe{\"type\":\"log\",\"text\":\"bad utf8\"}\n",
    b'{"type":"log","text":"unsafe","n":9007199254740993}\n',
    b'{"type":"call","id":7,"global":"tools","name":"echo","args":"wrong id"}\n',
    b'{"type":"call","id":0,"global":"tools","name":"echo","args":[1e999]}\n',
    b'{"type":"call","id":-0,"global":"tools","name":"echo","args":"negative zero id"}\n',
    b"[1,2,null]\n", b"null\n", b"42\n", b'"str"\n', b'{"type":"nope"}\n', b'{"type":"log","text":1}\n',
    b'{"type":"done","error":{"kind":"timeout","message":"forged kind"}}\n',
    b'{"type":"done","error":"not an object"}\n', b"\n", b"{\"type\":\"log\",\"text\":\"kept\",\"x\":[1,{\"y\":2}]}\n",
]:
    os.write(3, junk)
return await tools.echo("real")`
    const r = await run(program, [TOOLS(functions)])
    expect(r).toEqual({ logs: ['kept'], value: 'real' })
    expect(seen).toEqual(['real'])
  })

  it('the first done wins; later forged dones are dropped', async () => {
    const program = String.raw`
import os
os.write(3, b'{"type":"done","value":"first"}\n')
os.write(3, b'{"type":"done","value":"second"}\n')
return "real"`
    expect(await run(program)).toEqual({ logs: [], value: 'first' })
  })

  it('the host re-checks forged completions: non-lossless numbers, budget first, capped messages', async () => {
    const { runtime, fiber: f } = await load(PythonCodeRuntime, { maxValueBytes: 100, graceMs: 300 })
    const forge = (frame) => runtime.run({ program: `import os, time\nos.write(3, ${JSON.stringify(frame)}.encode() + b"\\n")\ntime.sleep(5)`, bindings: [] })
    expect(await forge('{"type":"done","value":{"a":[1,-0]}}')).toEqual({
      logs: [],
      error: { kind: 'invalid-output', message: 'completion value contained a non-lossless number' },
    })
    expect(await forge('{"type":"done","value":[1e400]}')).toEqual({
      logs: [],
      error: { kind: 'invalid-output', message: 'completion value contained a non-lossless number' },
    })
    // Over budget wins regardless of member order, even against 1e400.
    expect(await forge(`{"type":"done","value":[1e400,"${'x'.repeat(200)}"]}`)).toEqual({
      logs: [],
      error: { kind: 'output-limit', message: 'completion value exceeded 100 bytes' },
    })
    expect(await forge(`{"type":"done","value":["${'x'.repeat(200)}",1e400]}`)).toEqual({
      logs: [],
      error: { kind: 'output-limit', message: 'completion value exceeded 100 bytes' },
    })
    // A done without a value has none; one with both keeps the error.
    expect(await forge('{"type":"done"}')).toEqual({ logs: [] })
    expect(await forge('{"type":"done","value":1,"error":{"kind":"output-limit","message":"forged"}}')).toEqual({
      logs: [],
      error: { kind: 'output-limit', message: 'forged' },
    })
    const capped = await forge(`{"type":"done","error":{"kind":"exception","message":"${'é'.repeat(300)}"}}`)
    expect(capped.error.kind).toBe('exception')
    expect(capped.error.message).toBe(`${'é'.repeat(42)}… [truncated]`)
    expect(Buffer.byteLength(capped.error.message)).toBeLessThanOrEqual(100)
    await f.dispose()
  })

  it('a forged boot-ack does not cause a second run (44)', async () => {
    const program = 'import os\nos.write(3, b\'{"type":"boot-ack"}\\n\')\nimport asyncio\nawait asyncio.sleep(0.2)\nreturn "done"'
    expect(await run(program)).toEqual({ logs: [], value: 'done' })
  })

  it('forged calls with future ids are ignored; real calls continue from 0 (54)', async () => {
    const seen = []
    const functions = { echo: async (x) => (seen.push(x), x) }
    const program = String.raw`
import os
os.write(3, b'{"type":"call","id":5,"global":"tools","name":"echo","args":"forged future"}\n')
a = await tools.echo("a")
os.write(3, b'{"type":"call","id":0,"global":"tools","name":"echo","args":"forged replay"}\n')
b = await tools.echo("b")
return [a, b]`
    expect(await run(program, [TOOLS(functions)])).toEqual({ logs: [], value: ['a', 'b'] })
    expect(seen).toEqual(['a', 'b'])
  })

  it('an unknown binding is answered at once with its JSON-quoted name', async () => {
    const program = String.raw`
import os
os.write(3, b'{"type":"call","id":0,"global":"tools","name":"n\\u00f8pe\\ud800","args":1}\n')
return os.read(3, 65536).decode()`
    const r = await run(program, [TOOLS({ echo: async (x) => x })])
    expect(JSON.parse(r.value)).toEqual({ type: 'reply', id: 0, ok: false, message: 'unknown binding "tools.nøpe\\ud800"' })
  })

  it('a forged truncated frame makes the host push its own marker, never a second one (49)', async () => {
    const program = String.raw`
import os
print("before")
os.write(3, b'{"type":"log","text":"FORGED MARKER","truncated":true}\n')
os.write(3, b'{"type":"log","text":"after","truncated":true}\n')
print("dropped")
return 1`
    expect(await run(program)).toEqual({ logs: ['before', '[code-runtime-native] log capture truncated at 65536 bytes'], value: 1 })
  })

  it('a newline-free fd-3 flood past the cap is a worker-exit (53)', async () => {
    const program = 'import os\nchunk = b"x" * (1 << 20)\nfor _ in range(70):\n    os.write(3, chunk)\nimport time\ntime.sleep(10)'
    const started = Date.now()
    expect(await run(program)).toEqual({ logs: [], error: { kind: 'worker-exit', message: 'protocol frame exceeded 67108864 bytes on fd 3' } })
    expect(Date.now() - started).toBeLessThan(8000)
  })

  it('an oversized complete frame is a worker-exit too', async () => {
    const program = 'import os\nos.write(3, b\'{"type":"log","text":"\' + b"y" * (64 << 20) + b\'"}\\n\')\nreturn 1'
    expect(await run(program)).toEqual({ logs: [], error: { kind: 'worker-exit', message: 'protocol frame exceeded 67108864 bytes on fd 3' } })
  })
})

// docs/protocol.md#caps
describe('backlog caps', () => {
  const never = { never: () => new Promise(() => {}) }

  it('129 unsettled binding calls end the run: maxPendingCalls (55)', async () => {
    const program = 'import asyncio\nfor i in range(129):\n    asyncio.ensure_future(tools.never(i))\nawait asyncio.sleep(10)'
    expect(await run(program, [TOOLS(never)])).toEqual({
      logs: [],
      error: { kind: 'worker-exit', message: 'more than 128 binding calls were pending at once (maxPendingCalls): await calls before making more' },
    })
  })

  it('the call past the cap never reaches the host, even when the program makes them all at once', async () => {
    const { runtime, fiber: f } = await load(PythonCodeRuntime, { maxPendingCalls: 1 })
    const seen = []
    const functions = { never: (x) => (seen.push(x), new Promise(() => {})) }
    const program = 'import asyncio\nawait asyncio.gather(tools.never(1), tools.never(2), tools.never(3))'
    expect(await runtime.run({ program, bindings: [TOOLS(functions)] })).toEqual({
      logs: [],
      error: { kind: 'worker-exit', message: 'more than 1 binding calls were pending at once (maxPendingCalls): await calls before making more' },
    })
    expect(seen).toEqual([1])
    // 128 reach the host while the program sleeps; the 129th, made with them, does not.
    seen.length = 0
    const many = 'import asyncio\nfor i in range(129):\n    asyncio.ensure_future(tools.never(i))\nawait asyncio.sleep(10)'
    expect((await run(many, [TOOLS(functions)])).error.kind).toBe('worker-exit')
    expect(seen).toEqual([...Array(128).keys()])
    await f.dispose()
  })

  it('calls made together past the cap still run when the host settles each at once, each once and in order', async () => {
    const { runtime, fiber: f } = await load(PythonCodeRuntime, { maxPendingCalls: 2 })
    const seen = []
    const functions = { echo: async (x) => (seen.push(x), x) }
    const program = 'import asyncio\nprint("before")\nr = await asyncio.gather(*[tools.echo(i) for i in range(40)])\nprint("after")\nreturn sum(r)'
    expect(await runtime.run({ program, bindings: [TOOLS(functions)] })).toEqual({ logs: ['before', 'after'], value: 780 })
    expect(seen).toEqual([...Array(40).keys()])
    await f.dispose()
  })

  it('exactly 128 unsettled calls followed by a return complete (55)', async () => {
    const program = 'import asyncio\nfor i in range(128):\n    asyncio.ensure_future(tools.never(i))\nawait asyncio.sleep(0.3)\nreturn "ok"'
    expect(await run(program, [TOOLS(never)])).toEqual({ logs: [], value: 'ok' })
  })

  it('a child that stops reading its replies overflows the reply queue (55)', async () => {
    const functions = { blob: async () => 'r'.repeat(4096) }
    const program = `
import asyncio
asyncio.get_running_loop().remove_reader(3)
for i in range(1300):
    asyncio.ensure_future(tools.blob(i))
    if i % 50 == 49:
        await asyncio.sleep(0.02)
await asyncio.sleep(10)`
    expect(await run(program, [TOOLS(functions)])).toEqual({
      logs: [],
      error: { kind: 'worker-exit', message: 'reply queue exceeded 1024 pending frames on fd 3 (the child stopped consuming its replies)' },
    })
  })

  it('a child that returns with replies it never read: its last frames are read all the same', async () => {
    // The child exits with replies unread in its socket, and fd 3 may report an error to the
    // host rather than a plain end: the frames it wrote before (its log, its done) are read all
    // the same, whichever of the host's threads reads fd 3 then.
    const functions = { blob: async () => 'r'.repeat(65536) }
    const program = `
import asyncio
asyncio.get_running_loop().remove_reader(3)
for i in range(12):
    asyncio.ensure_future(tools.blob(i))
await asyncio.sleep(0.3)
print("leaving")
return "finished"`
    for (let i = 0; i < 5; i++) {
      expect(await run(program, [TOOLS(functions)])).toEqual({ logs: ['leaving'], value: 'finished' })
    }
  })

  it('fd 3 torn down while replies are backed up: nothing hangs, the wall clock settles it (23)', async () => {
    const { runtime, fiber: f } = await load(PythonCodeRuntime, { maxWallMs: 3000, graceMs: 300 })
    const functions = { blob: async () => 'r'.repeat(65536) }
    const program = `
import asyncio, os, time
loop = asyncio.get_running_loop()
loop.remove_reader(3)
for i in range(40):
    asyncio.ensure_future(tools.blob(i))
await asyncio.sleep(0.5)
os.close(3)
time.sleep(30)`
    const started = Date.now()
    const r = await runtime.run({ program, bindings: [TOOLS(functions)] })
    expect(r).toEqual({ logs: [], error: { kind: 'timeout', message: 'wall-clock ceiling reached (3000ms)' } })
    expect(Date.now() - started).toBeLessThan(6000)
    await f.dispose()
  })
})

// docs/budgets-and-ledger.md#python-budgets
describe("the host's event loop", () => {
  // Node's main thread reads a run's fd 3 and, after answering a call at once, waits briefly for
  // the program's next (src/process_tier/host/next_call.rs): a program calling as fast as it can
  // must still leave the loop its turns (timers, I/O, other runs).
  it('keeps its turns while a program calls a binding that answers at once, as fast as it can', async () => {
    const turns = loopTurns()
    const program = 'import time\nend = time.monotonic() + 0.4\nn = 0\nwhile time.monotonic() < end:\n    await tools.noop({})\n    n += 1\nreturn n > 100'
    const r = await run(program, [TOOLS({ noop: async () => null })])
    const ticks = turns.stop()
    expect(r).toEqual({ logs: [], value: true })
    // 400 ms of back-to-back calls; a loop starved by them would have run the timer a few
    // times at most. Each turn may be late by up to the main thread's service bound (2 ms).
    expect(ticks).toBeGreaterThanOrEqual(20)
  })
})

describe('CPU, wall and memory limits', () => {
  let cpu
  beforeAll(async () => {
    cpu = await load(PythonCodeRuntime, { cpuSeconds: 1, graceMs: 300 })
  })
  afterAll(() => cpu.fiber.dispose())
  const CPU_MESSAGE = 'CPU time exhausted (limit at most the configured 1s; a stricter inherited RLIMIT_CPU can fire sooner)'

  it('while True: pass hits the CPU limit (56)', async () => {
    const r = await cpu.runtime.run({ program: 'while True:\n    pass', bindings: [] })
    expect(r).toEqual({ logs: [], error: { kind: 'timeout', message: `${CPU_MESSAGE} at <model>:1:1` } })
  })

  it('a program that traps SIGXCPU and returns is still a CPU timeout (56)', async () => {
    const program = `
import signal
hit = []
signal.signal(signal.SIGXCPU, lambda *a: hit.append(1))
while not hit:
    pass
print("trapped")
return "survived"`
    const r = await cpu.runtime.run({ program, bindings: [] })
    // The CPU timer ends it before the kernel's SIGXCPU reaches the program's handler.
    expect(r.error).toEqual({ kind: 'timeout', message: `${CPU_MESSAGE} at <model>:5:1` })
    // With the timer disarmed too, the kernel's SIGXCPU reaches the handler and the program
    // returns: the post-check and the host's verdict still end it, with no location.
    const disarmed = await cpu.runtime.run({ program: `import signal\nsignal.setitimer(signal.ITIMER_PROF, 0)${program}`, bindings: [] })
    expect(disarmed).toEqual({ logs: ['trapped'], error: { kind: 'timeout', message: CPU_MESSAGE } })
  })

  it('CPU burned in reaped descendants counts (post-check)', async () => {
    // Neither the child (0.8 s) nor the program itself (0.35 s) reaches the 1 s limit alone.
    const program = `
import subprocess, sys, time
subprocess.run([sys.executable, "-c", "import time\\nwhile time.process_time() < 0.8: pass"], check=True)
while time.process_time() < 0.35:
    pass
return "returned"`
    const r = await cpu.runtime.run({ program, bindings: [] })
    expect(r.error).toEqual({ kind: 'timeout', message: CPU_MESSAGE })
  })

  it('the wall clock covers a sleeping program (57)', async () => {
    const { runtime, fiber: f } = await load(PythonCodeRuntime, { maxWallMs: 500, graceMs: 300 })
    const started = Date.now()
    const r = await runtime.run({ program: 'import asyncio\nprint("sleeping")\nawait asyncio.sleep(10)', bindings: [] })
    expect(r).toEqual({ logs: ['sleeping'], error: { kind: 'timeout', message: 'wall-clock ceiling reached (500ms)' } })
    expect(Date.now() - started).toBeLessThan(3000)
    await f.dispose()
  })

  it('a memory bomb stops at RLIMIT_AS; the host stays healthy', async () => {
    const before = process.memoryUsage().rss
    const r = await run('chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 * 1024))')
    expect(r.error.kind).toBe('exception')
    expect(r.error.message).toMatch(/MemoryError$/)
    const r2 = await run('x = bytearray(4 * 1024 ** 3)')
    expect(r2.error.kind).toBe('exception')
    expect(r2.error.message).toMatch(/MemoryError/)
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 2 ** 20)
    expect(await run('return "after"')).toEqual({ logs: [], value: 'after' })
  })
})

// docs/python.md#teardown
describe('process teardown: the run is its own PID namespace', () => {
  // Everything a run starts carries the run's staging path (under TMP) or a test's marker in its
  // command line: the sandbox helper, the namespace's init, the interpreter and its forks.
  const marker = () => path.join(TMP, `marker-${Math.random().toString(36).slice(2)}`)
  // Each program first logs its staging directory: the processes of that run (a spare booting for
  // the next run has another) must all be gone when run() resolves.
  const STAGING = 'import os as _o, sys as _s\nprint("staging", _o.path.dirname(_s.modules["__main__"].__file__))\n'
  const staging = (r) => r.logs.shift().slice('staging '.length)
  const ready = `
import os
def fork_ready(child):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        child(w)
        os._exit(0)
    os.close(w)
    os.read(r, 1)
    return pid
`

  it('the layers are active on this machine', () => {
    expect(R.sandbox).toEqual({
      process: true,
      helper: true,
      namespaces: true,
      landlock: R.sandbox.landlock,
      seccomp: true,
      processCap: R.sandbox.processCap,
      privateRoot: true,
      // A root host's children are nobody; any other host's have its own uid.
      uid: process.getuid() === 0 ? 65534 : process.getuid(),
      // Root here can make a memory cgroup per run; an unprivileged user has none delegated.
      memoryCgroup: process.getuid() === 0,
    })
    expect(R.sandbox.landlock).toBeGreaterThanOrEqual(6)
  })

  it('a bounded fork storm of 50 sleeping children dies with the run (58)', async () => {
    const program = `${STAGING}
import os, time
pids = []
for _ in range(50):
    pid = os.fork()
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    pids.append(pid)
return len(set(pids))`
    const r = await run(program)
    const dir = staging(r)
    expect(r).toEqual({ logs: [], value: 50 })
    expect(liveProcesses(dir)).toEqual([])
  })

  it('grandchildren are gone after a timeout and after an abort (58)', async () => {
    const { runtime, fiber: f } = await load(PythonCodeRuntime, { maxWallMs: 2000, graceMs: 300 })
    for (const mode of ['timeout', 'abort']) {
      const tag = marker()
      const program = `${STAGING}
import asyncio, subprocess, sys
grandparent = r"""
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", sys.argv[1]])
time.sleep(60)
"""
subprocess.Popen([sys.executable, "-c", grandparent, ${JSON.stringify(tag)}])
await asyncio.sleep(30)`
      const controller = new AbortController()
      const pending = runtime.run({ program, bindings: [], signal: controller.signal })
      // Both modes wait until the grandchild exists, then end the run by abort or by the wall clock.
      while (liveProcesses(tag).length < 2) await sleep(20)
      if (mode === 'abort') controller.abort(new Error('stop now'))
      const r = await pending
      const dir = staging(r)
      expect(r.error).toEqual(
        mode === 'abort' ? { kind: 'abort', message: 'stop now' } : { kind: 'timeout', message: 'wall-clock ceiling reached (2000ms)' },
      )
      expect(liveProcesses(tag)).toEqual([])
      expect(liveProcesses(dir)).toEqual([])
    }
    await f.dispose()
  })

  it('a descendant that ignores SIGTERM and closes its descriptors dies when the program ends (58)', async () => {
    const program = `${STAGING}${ready}
import signal, time
def child(w):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for fd in (0, 1, 2, 3):
        os.close(fd)
    os.write(w, b"1")
    time.sleep(60)
fork_ready(child)
return "parent done"`
    const r = await run(program)
    const dir = staging(r)
    expect(r).toEqual({ logs: [], value: 'parent done' })
    expect(liveProcesses(dir)).toEqual([])
  })

  it('a program that ignores SIGTERM itself is SIGKILLed after graceMs (58)', async () => {
    const { runtime, fiber: f } = await load(PythonCodeRuntime, { maxWallMs: 500, graceMs: 300 })
    const started = Date.now()
    const r = await runtime.run({ program: `${STAGING}import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)`, bindings: [] })
    const dir = staging(r)
    expect(r).toEqual({ logs: [], error: { kind: 'timeout', message: 'wall-clock ceiling reached (500ms)' } })
    expect(Date.now() - started).toBeGreaterThanOrEqual(800)
    expect(liveProcesses(dir)).toEqual([])
    await f.dispose()
  })

  it('a descendant that setsid()s dies with the run: no escape, no close-deadline wait', async () => {
    const program = `${STAGING}${ready}
import time
def child(w):
    os.setsid()
    os.write(w, b"1")
    time.sleep(30)
pid = fork_ready(child)
print("escapee", pid)
return "escaped"`
    const started = Date.now()
    const r = await run(program)
    const dir = staging(r)
    expect(r).toEqual({ logs: [expect.stringMatching(/^escapee \d+$/)], value: 'escaped' })
    // It held stdout, stderr and fd 3, yet the run did not wait for the close deadline (graceMs + 2000).
    expect(Date.now() - started).toBeLessThan(2300)
    expect(liveProcesses(dir)).toEqual([])
  })

  it('an escapee that closes its descriptors dies with the run too', async () => {
    const program = `${STAGING}${ready}
import time
def child(w):
    os.setsid()
    for fd in (0, 1, 2, 3):
        os.close(fd)
    os.write(w, b"1")
    time.sleep(30)
fork_ready(child)
return "quick"`
    const r = await run(program)
    const dir = staging(r)
    expect(r).toEqual({ logs: [], value: 'quick' })
    expect(liveProcesses(dir)).toEqual([])
  })
})

// docs/python.md#hardening
describe('the bootstrap under attack', () => {
  it('rebinding every __main__ global still produces a correct done (59)', async () => {
    const program = `
import __main__
for name in list(vars(__main__)):
    if name not in ("__name__", "__builtins__"):
        setattr(__main__, name, None)
print("rebound")
return {"ok": True}`
    expect(await run(program)).toEqual({ logs: ['rebound'], value: { ok: true } })
    const failing = 'import __main__\nfor name in list(vars(__main__)):\n    setattr(__main__, name, None)\nraise ValueError("still rendered")'
    const r = await run(failing)
    expect(r.error.kind).toBe('exception')
    expect(r.error.message).toMatch(/ValueError: still rendered$/)
  })

  it('clobbered builtins give the fixed <unrenderable> exception, never a hang (59)', async () => {
    const program = 'import builtins\nfor name in ("len", "str", "type", "isinstance", "memoryview", "bytes", "min"):\n    setattr(builtins, name, None)\nreturn [1, 2]'
    expect(await run(program)).toEqual({ logs: [], error: { kind: 'exception', message: '<unrenderable>' } })
  })

  // docs/python.md#exceptions
  it('a traceback that cannot be rendered falls back to the class name', async () => {
    const program = 'import traceback\ntraceback.TracebackException = None\nraise KeyError("x")'
    expect(await run(program)).toEqual({ logs: [], error: { kind: 'exception', message: 'KeyError: <diagnostic rendering failed>' } })
  })
})

// docs/python.md#exceptions, docs/failures.md#python
describe('exceptions and exits', () => {
  it('renders only <model> frames and ends with the exception line (60)', async () => {
    const functions = { fail: async () => { throw new Error('host says no') } }
    const r = await run('def inner():\n    raise ValueError("boom")\n\ninner()', [TOOLS(functions)])
    expect(r.error.kind).toBe('exception')
    expect(noCarets(r.error.message)).toBe(
      'Traceback (most recent call last):\n  File "<model>", line 4, in __dsh_main__\n    inner()\n  File "<model>", line 2, in inner\n    raise ValueError("boom")\nValueError: boom',
    )
    const viaBinding = await run('\n\nawait tools.fail({})', [TOOLS(functions)])
    expect(noCarets(viaBinding.error.message)).toBe(
      'Traceback (most recent call last):\n  File "<model>", line 3, in __dsh_main__\n    await tools.fail({})\nToolCallError: host says no',
    )
  })

  it('a SyntaxError renders exception-only with the user line (60)', async () => {
    const r = await run('x = 1\ny = 2\nz = = 3')
    expect(r).toEqual({ logs: [], error: { kind: 'exception', message: '  File "<model>", line 3\n    z = = 3\n        ^\nSyntaxError: invalid syntax' } })
  })

  it('a 200-link chain is cut at 100 links with the marker line (60)', async () => {
    const program = `
def chain(n):
    try:
        if n == 0:
            raise KeyError("root")
        chain(n - 1)
    except Exception as e:
        raise RuntimeError(f"link {n}") from e
chain(199)`
    const r = await run(program)
    const message = r.error.message
    expect(message.startsWith('[code-runtime-native] exception chain truncated at 100 links\n')).toBe(true)
    expect(message.endsWith('RuntimeError: link 199')).toBe(true)
    expect(message.match(/^RuntimeError: link \d+$/gm)).toHaveLength(100)
    expect(message).not.toContain('KeyError')
  })

  it('an oversized message ends with the suffix and stays within maxValueBytes (60)', async () => {
    const { runtime, fiber: f } = await load(PythonCodeRuntime, { maxValueBytes: 200 })
    const r = await runtime.run({ program: 'raise ValueError("é" * 10000)', bindings: [] })
    expect(r.error.kind).toBe('exception')
    expect(r.error.message.endsWith('… [truncated]')).toBe(true)
    expect(Buffer.byteLength(JSON.stringify(r.error.message)) - 2).toBeLessThanOrEqual(200)
    expect(Buffer.byteLength(JSON.stringify(r.error.message)) - 2).toBeGreaterThan(180)
    await f.dispose()
  })

  it('sys.exit is an exception; os._exit and signals are worker-exit (61)', async () => {
    const exited = await run('import sys\nsys.exit(3)')
    expect(exited.error.kind).toBe('exception')
    expect(noCarets(exited.error.message)).toBe('Traceback (most recent call last):\n  File "<model>", line 2, in __dsh_main__\n    sys.exit(3)\nSystemExit: 3')
    expect(await run('import os\nos._exit(3)')).toEqual({ logs: [], error: { kind: 'worker-exit', message: 'python exited (code=3, signal=null) before completing' } })
    expect(await run('import os, signal\nos.kill(os.getpid(), signal.SIGKILL)')).toEqual({
      logs: [],
      error: { kind: 'worker-exit', message: 'python exited (code=null, signal=SIGKILL) before completing' },
    })
  })
})

// docs/python.md#teardown, docs/seam.md#disposal
describe('abort and disposal', () => {
  it('an AbortSignal ends a live run with its reason', async () => {
    const c = new AbortController()
    const pending = run('import asyncio\nprint("started", flush=True)\nawait asyncio.sleep(30)', [], { signal: c.signal })
    await sleep(300)
    c.abort('user cancelled')
    expect(await pending).toEqual({ logs: ['started'], error: { kind: 'abort', message: 'user cancelled' } })
  })

  it('dispose settles live runs as abort and resolves only once their groups are empty (62)', async () => {
    const { runtime, fiber: f } = await load(PythonCodeRuntime, { graceMs: 500 })
    const tag = path.join(TMP, `dispose-${Math.random().toString(36).slice(2)}`)
    // The program ignores SIGTERM itself, and so does a child it started.
    const program = `
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)", ${JSON.stringify(tag)}])
time.sleep(60)`
    const pending = [runtime.run({ program, bindings: [] }), runtime.run({ program: 'import time\ntime.sleep(60)', bindings: [] })]
    while (liveProcesses(tag).length < 1) await sleep(20)
    const started = Date.now()
    await f.dispose()
    // The SIGTERM-ignoring program held the run until the grace SIGKILL.
    expect(Date.now() - started).toBeGreaterThanOrEqual(500)
    expect(liveProcesses(tag)).toEqual([])
    for (const r of await Promise.all(pending)) expect(r).toEqual({ logs: [], error: { kind: 'abort', message: 'runtime disposed' } })
    await expect(runtime.run({ program: 'return 1', bindings: [] })).rejects.toThrow(/after disposal/)
  })
})
