// The Python template (docs/python.md#the-template): one interpreter per runtime, started at load,
// that forks each run's child into the same layers a spawned child takes. A run forked from it
// must be indistinguishable from one spawned through the helper (compared side by side with a
// wrapper that refuses to be a template), must share nothing random with another run, and the
// runtime must survive its template dying at any time.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { PythonCodeRuntime, PythonPtcRuntime } from '../lib/index.mjs'
import { runAs, unprivilegedPackage } from './process-helpers.mjs'
import {
  PYTHON,
  REPO,
  fakePython,
  isAlive,
  liveProcesses,
  load,
  privateTmpdir,
  pythonTemplates,
  script,
  sleep,
  stagingDirs,
  unreapedChildren,
} from './python-helpers.mjs'
import { threadsNamedNow } from './helpers.mjs'

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 })
const TMP = privateTmpdir('py-template')
const BINS = fs.mkdtempSync(path.join(TMP, 'bins-'))

afterAll(() => {
  expect(liveProcesses(TMP)).toEqual([])
  expect(unreapedChildren()).toEqual([])
  expect(stagingDirs(TMP)).toEqual([])
  fs.rmSync(TMP, { recursive: true, force: true })
})

const run = (runtime, program) => runtime.run({ program, bindings: [] })

/** Kills `pid` and waits until it is no longer running (a zombie counts as gone). */
async function kill(pid) {
  process.kill(pid, 'SIGKILL')
  while (isAlive(pid)) await sleep(10)
}

/** What a program can see of its own process; paths are relative to its staging directory. */
const SELF_VIEW = `
import os, resource, sys
main = sys.modules["__main__"].__file__
home = os.path.dirname(main)
def kind(fd):
    try:
        return os.readlink("/proc/self/fd/" + fd).split(":[")[0]
    except OSError:
        return None  # the descriptor listdir itself had open
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
return {
    "fds": {fd: k for fd, k in ((fd, kind(fd)) for fd in os.listdir("/proc/self/fd")) if k},
    "stdin": sys.stdin.read(),
    "sessionLeader": os.getsid(0) == os.getpid(),
    "groupLeader": os.getpgrp() == os.getpid(),
    "pid": os.getpid(),
    "ids": [os.getuid(), os.getgid(), os.geteuid(), os.getegid()],
    "environ": {k: v.replace(home, "<home>") for k, v in os.environ.items()},
    "main": os.path.basename(main),
    "argv": [a.replace(home, "<home>") for a in sys.argv],
    "cwd": os.getcwd().replace(home, "<home>"),
    "limits": [list(resource.getrlimit(r)) for r in (resource.RLIMIT_CORE, resource.RLIMIT_CPU, resource.RLIMIT_AS, resource.RLIMIT_FSIZE, resource.RLIMIT_NPROC, resource.RLIMIT_NOFILE)],
    "status": {k: status[k].strip() for k in ("Seccomp", "NoNewPrivs", "CapEff", "CapPrm", "CapInh", "CapAmb", "CapBnd", "Threads", "SigBlk", "SigIgn")},
    "mounts": sorted(l.split()[4].replace(home, "<home>") for l in open("/proc/self/mountinfo")),
    "proc": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "flags": [sys.flags.isolated, sys.flags.unbuffered if hasattr(sys.flags, "unbuffered") else None, sys.dont_write_bytecode],
    "path": [p for p in sys.path if p.startswith(home)],
    "addonMapped": sum(int(r.split("-")[1], 16) - int(r.split("-")[0], 16) for r, *rest in (l.split() for l in open("/proc/self/maps")) if rest[-1].endswith(".node")),
    "libraryMapped": sum(int(r.split("-")[1], 16) - int(r.split("-")[0], 16) for r, *rest in (l.split() for l in open("/proc/self/maps")) if rest[-1].endswith("/libcode_runtime_native_python.so")),
}
`

describe('one template per runtime', () => {
  it('starts at load as a single-threaded child of the host in a session of its own, keeps no staging directory, and is gone at dispose', async () => {
    const before = new Set(pythonTemplates())
    const { runtime, fiber } = await load(PythonCodeRuntime, { graceMs: 300 })
    const started = pythonTemplates().filter((pid) => !before.has(pid))
    expect(started).toHaveLength(1)
    const [template] = started
    expect(fs.readdirSync(`/proc/${template}/task`)).toHaveLength(1)
    // Its stderr is the host's (where a panic in its serving loop is printed), though Node opened
    // its own close-on-exec; its standard input and output are /dev/null.
    expect(fs.readlinkSync(`/proc/${template}/fd/2`)).toBe(fs.readlinkSync('/proc/self/fd/2'))
    expect([0, 1].map((fd) => fs.readlinkSync(`/proc/${template}/fd/${fd}`))).toEqual(['/dev/null', '/dev/null'])
    // A session of its own: a terminal's signals to the host's group do not reach it.
    const stat = fs.readFileSync(`/proc/${template}/stat`, 'utf8')
    expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3])).toBe(template)
    // Its staging directory went once it had imported what it needs; the command line keeps the name.
    const script = fs.readFileSync(`/proc/${template}/cmdline`, 'utf8').split('\0')[3]
    expect(script).toMatch(/\/template\.py$/)
    expect(fs.existsSync(path.dirname(script))).toBe(false)
    expect(await run(runtime, 'return 1')).toEqual({ logs: [], value: 1 })
    // Runs do not add templates.
    expect(pythonTemplates().filter((pid) => !before.has(pid))).toEqual([template])
    await fiber.dispose()
    expect(isAlive(template)).toBe(false)
  })
})

/** The region a forked child's allocations come from until its program starts (crates/python-entry/src/arena.rs). */
const CHILD_REGION_BYTES = 512 << 10

describe('a forked run is what a spawned run is', () => {
  it('descriptors, session, ids, environment, entry, limits, kernel layers, mounts and namespace: the same as a child spawned through the helper', async () => {
    const spawning = fakePython(BINS, 'no-template', { run: `exec ${PYTHON} "$@"`, template: false })
    const forked = await load(PythonCodeRuntime, { graceMs: 300, cpuSeconds: 9, addressSpaceMb: 700 })
    const spawned = await load(PythonCodeRuntime, { graceMs: 300, cpuSeconds: 9, addressSpaceMb: 700, pythonBin: spawning })
    try {
      const a = await run(forked.runtime, SELF_VIEW)
      const b = await run(spawned.runtime, SELF_VIEW)
      expect(a.error).toBeUndefined()
      // A forked child holds the template's library mapped (crates/python-entry, under 1 MiB)
      // and the region its own allocations came from before the program started (512 KiB,
      // crates/python-entry/src/arena.rs), which the program cannot use: its RLIMIT_AS is the
      // budget plus exactly those. Neither maps the addon (57 MB, V8 and napi: the template no
      // longer loads it).
      expect([a.value.addonMapped, b.value.addonMapped]).toEqual([0, 0])
      expect(b.value.libraryMapped).toBe(0)
      expect(a.value.libraryMapped).toBeGreaterThan(0)
      expect(a.value.libraryMapped).toBeLessThan(4 << 20)
      expect(a.value.limits[2]).toEqual(b.value.limits[2].map((n) => n + a.value.libraryMapped + CHILD_REGION_BYTES))
      a.value.limits[2] = b.value.limits[2]
      a.value.libraryMapped = 0
      // What the wrapper script adds of its own: the shell's PWD, and its file in the run's root.
      delete b.value.environ.PWD
      b.value.mounts = b.value.mounts.filter((m) => m !== spawning)
      // A spawned child's directory is bound from the host (it holds the bootstrap); a forked
      // one's is only a name in its own root, so nothing the host has at that path is bound.
      expect(b.value.mounts).toContain('<home>')
      expect(a.value.mounts).not.toContain('<home>')
      expect(a.value.mounts).toContain('<home>/tmp')
      b.value.mounts = b.value.mounts.filter((m) => m !== '<home>')
      // The spawned one really was spawned: its interpreter's command line is its bootstrap's.
      const byTemplate = 'import sys\nreturn "template.py" in " ".join(sys.orig_argv)'
      expect(await run(spawned.runtime, byTemplate)).toEqual({ logs: [], value: false })
      expect(await run(forked.runtime, byTemplate)).toEqual({ logs: [], value: true })
      expect(a).toEqual(b)
      // And what both are: fds 0–3 and the event loop's own (its epoll and wake-up pair), stdin
      // at EOF, TMPDIR and the interpreter's locale coercion alone.
      expect(a.value.fds).toEqual({ 0: 'pipe', 1: 'pipe', 2: 'pipe', 3: 'socket', 4: 'anon_inode', 5: 'socket', 6: 'socket' })
      expect(a.value.stdin).toBe('')
      expect(a.value.environ).toEqual({ LC_CTYPE: 'C.UTF-8', TMPDIR: '<home>/tmp' })
      expect(a.value.status.CapEff).toBe('0000000000000000')
      expect(a.value.main).toBe('bootstrap.py')
      expect(a.value.argv).toEqual(['<home>/bootstrap.py'])
      expect(a.value.limits.slice(0, 3)).toEqual([[0, 0], [9, 10], [700 * 2 ** 20, 700 * 2 ** 20]])
      expect(a.value.status.Seccomp).toBe('2')
      expect(a.value.status.Threads).toBe('1')
    } finally {
      await forked.fiber.dispose()
      await spawned.fiber.dispose()
    }
  })

  it("gets asyncio's ssl on first use: the template holds no OpenSSL, and TLS behaves as in a spawned run", async () => {
    const spawning = fakePython(BINS, 'no-template-ssl', { run: `exec ${PYTHON} "$@"`, template: false })
    const before = new Set(pythonTemplates())
    const forked = await load(PythonCodeRuntime, { graceMs: 300 })
    const spawned = await load(PythonCodeRuntime, { graceMs: 300, pythonBin: spawning })
    try {
      const [template] = pythonTemplates().filter((pid) => !before.has(pid))
      const maps = fs.readFileSync(`/proc/${template}/maps`, 'utf8')
      expect(maps).toMatch(/libpython|python3/)
      expect(maps).not.toMatch(/libssl|libcrypto|_ssl\./)
      const program = `
import asyncio, socket, sys
import asyncio.base_events as base, asyncio.selector_events as selector, asyncio.sslproto as proto
loaded_at_start = "_ssl" in sys.modules
context = proto.ssl.create_default_context()
import ssl
a, b = socket.socketpair()
b.close()
try:
    await asyncio.wait_for(asyncio.open_connection(sock=a, ssl=context, server_hostname="peer"), 5)
    handshake = "no error"
except Exception as e:
    handshake = type(e).__name__
return {
    "loadedAtStart": loaded_at_start,
    "context": type(context).__name__,
    "asyncioHoldsSsl": [base.ssl is ssl, selector.ssl is ssl, proto.ssl is ssl],
    "againErrors": getattr(proto, "SSLAgainErrors", None) == (ssl.SSLWantReadError, ssl.SSLSyscallError) if sys.version_info >= (3, 11) else None,
    "handshake": handshake,
}`
      const a = await run(forked.runtime, program)
      const b = await run(spawned.runtime, program)
      // A spawned interpreter imports ssl with asyncio; a forked run only when something uses it.
      expect(b.value.loadedAtStart).toBe(true)
      expect(a.value.loadedAtStart).toBe(false)
      expect({ ...a, value: { ...a.value, loadedAtStart: true } }).toEqual(b)
      expect(b.value.handshake).not.toBe('no error')
      expect(b.value.asyncioHoldsSsl).toEqual([true, true, true])
      // What one run loaded is not the next run's.
      expect(await run(forked.runtime, 'import sys\nreturn ["_ssl" in sys.modules, "ssl" in sys.modules]')).toEqual({ logs: [], value: [false, false] })
      expect(await run(forked.runtime, 'import ssl\nreturn ssl.OPENSSL_VERSION.split()[0]')).toEqual({ logs: [], value: 'OpenSSL' })
    } finally {
      await forked.fiber.dispose()
      await spawned.fiber.dispose()
    }
  })

  it('shares no random state with another run: random, uuid and secrets differ per run', async () => {
    const { runtime, fiber } = await load(PythonCodeRuntime, { graceMs: 300 })
    try {
      const program = 'import random, secrets, uuid\nreturn [random.getrandbits(48), str(uuid.uuid4()), secrets.token_hex(8)]'
      const seen = []
      for (let i = 0; i < 4; i++) seen.push((await run(runtime, program)).value)
      for (let k = 0; k < 3; k++) expect(new Set(seen.map((v) => v[k])).size).toBe(4)
    } finally {
      await fiber.dispose()
    }
  })

  it("finds nothing of an earlier run's plan in its memory: the template never holds one", async () => {
    const { runtime, fiber } = await load(PythonCodeRuntime, { graceMs: 300 })
    try {
      const own = 'import os, sys\nreturn os.path.basename(os.path.dirname(sys.modules["__main__"].__file__))'
      const earlier = []
      for (let i = 0; i < 3; i++) earlier.push((await run(runtime, own)).value)
      // Counted in every readable mapping of the process, reversed in the program text so that
      // only the one bytes object built to search for each is found; a name of the same form that
      // no run had is the control.
      const control = earlier[0].slice(0, -6) + 'QQQQQQ'
      const wanted = [...earlier, control].map((n) => [...n].reverse().join(''))
      const scan = `import ctypes
wanted = [w[::-1].encode() for w in ${JSON.stringify(wanted)}]
counts = [0] * len(wanted)
with open("/proc/self/maps") as maps:
    for line in maps:
        f = line.split()
        if "r" not in f[1] or (len(f) > 5 and f[5].startswith("[v")):
            continue
        a, b = (int(x, 16) for x in f[0].split("-"))
        chunk = ctypes.string_at(a, b - a)
        for i, w in enumerate(wanted):
            counts[i] += chunk.count(w)
return counts`
      const r = await run(runtime, scan)
      expect(r.error).toBeUndefined()
      const controlCount = r.value.at(-1)
      expect(controlCount).toBeGreaterThan(0)
      expect(r.value).toEqual(wanted.map(() => controlCount))
    } finally {
      await fiber.dispose()
    }
  })

  it('a run can neither see nor signal its template', async () => {
    const before = new Set(pythonTemplates())
    const { runtime, fiber } = await load(PythonCodeRuntime, { graceMs: 300 })
    const [template] = pythonTemplates().filter((pid) => !before.has(pid))
    try {
      const r = await run(
        runtime,
        `import os, signal\ntry:\n    os.kill(${template}, signal.SIGKILL)\n    sent = "sent"\nexcept OSError as e:\n    sent = type(e).__name__\nreturn [sent, os.path.exists("/proc/${template}")]`,
      )
      expect(r).toEqual({ logs: [], value: ['ProcessLookupError', false] })
      expect(isAlive(template)).toBe(true)
    } finally {
      await fiber.dispose()
    }
  })
})

/** The children of `pid` (the kernel's list; empty once it has gone). */
function childrenOf(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number)
  } catch {
    return []
  }
}

/**
 * A binding `probe.forked([count, ms])` that records what `template` has forked while a program
 * runs (the run's own keeper, and the spares' that boot beside it), looked at once it has `count`
 * children or `ms` have passed.
 */
function forkedProbe(template) {
  const forked = []
  const probe = {
    global: 'probe',
    functions: {
      async forked([count, ms]) {
        for (let waited = 0; waited < ms && childrenOf(template).length < count; waited += 10) await sleep(10)
        forked.push(childrenOf(template).length)
        return 0
      },
    },
  }
  return { forked, probe }
}

/**
 * Two runs back to back through `run` (a program awaiting `probe.forked`): the first's spare boots
 * beside it and a second once it is over; the next, taking one, has two beside it, and no more.
 * Once runs pause, the spares past one are killed: the template has forked one child.
 */
async function twoDeepInARow(run, forked, template) {
  expect((await run(3, 500)).value).toBe(1)
  expect(forked.at(-1)).toBe(2)
  // Looked at for less than the pause that kills the spares past one (250 ms with no run started).
  expect((await run(4, 200)).value).toBe(1)
  expect(forked.at(-1)).toBe(3)
  await sleep(1000)
  expect(childrenOf(template)).toHaveLength(1)
  expect((await run(0, 0)).value).toBe(1)
}

/** `field:` of /proc/<pid>/status, trimmed. */
const statusOf = (pid, field) => new RegExp(`^${field}:\\s+(.*)$`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]

// What a spare's keeper and init exec: the helper's static build beside it (scripts/link-sandbox-roles.mjs).
const ROLES = fs.realpathSync(path.join(REPO, 'code-runtime-native-sandbox-roles'))
const exe = (pid) => {
  try {
    return fs.readlinkSync(`/proc/${pid}/exe`)
  } catch {
    return undefined
  }
}

/** Whether `pid` has taken its ids: real, effective, saved and filesystem ids all one. */
const idsTaken = (pid) => {
  try {
    return ['Uid', 'Gid'].every((field) => new Set(statusOf(pid, field).split('\t')).size === 1)
  } catch {
    return false
  }
}

/**
 * The spare booted for the next run once it waits in its layers (a child booted on its run's own
 * path keeps its keeper and init as they are): the template's child is its keeper, whose children
 * are the namespace's init (made without a copy of the interpreter and exec'd at once:
 * src/sandbox/harden/joined.rs) and the program, once it took its ids and the keeper has exec'd.
 */
async function slimSpare(template) {
  for (let i = 0; i < 500; i++) {
    const keeper = childrenOf(template).find((pid) => exe(pid) === ROLES)
    const children = keeper ? childrenOf(keeper) : []
    const init = children.find((pid) => exe(pid) === ROLES)
    const program = children.find((pid) => exe(pid) === fs.realpathSync(PYTHON))
    if (init && program && idsTaken(program)) return { keeper, init, program }
    await sleep(10)
  }
  throw new Error('no spare with a slimmed keeper and init within 5 s')
}

/** The namespace `kind` of `pid` (its link's target). */
const namespaceOf = (pid, kind) => fs.readlinkSync(`/proc/${pid}/ns/${kind}`)

describe("a forked run's keeper and init", () => {
  it('become the helper\'s static build once a spare has forked: nothing of the interpreter stays in them, init has the program\'s ids, no capability, and is not dumpable', async () => {
    const before = new Set(pythonTemplates())
    const { runtime, fiber } = await load(PythonCodeRuntime, { graceMs: 300 })
    try {
      const [template] = pythonTemplates().filter((pid) => !before.has(pid))
      expect(await run(runtime, 'return 1')).toEqual({ logs: [], value: 1 })
      const { keeper, init, program } = await slimSpare(template)
      expect([exe(keeper), exe(init), exe(program)]).toEqual([ROLES, ROLES, fs.realpathSync(PYTHON)])
      // Their command lines name the run they serve (its scratch directory): the roles' arguments.
      // Init's is the run's plan without its program or environment: nothing of the program's.
      const cmdline = (pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1)
      const scratch = cmdline(keeper)[5]
      expect(cmdline(keeper)).toEqual(['code-runtime-native-sandbox', 'joined-keeper', String(program), String(init), expect.stringMatching(/^\d+$/), expect.stringMatching(/\/tmp$/)])
      expect(cmdline(init).slice(0, 2)).toEqual(['code-runtime-native-sandbox', 'joined-init'])
      expect(cmdline(init).slice(7, 11)).toEqual(['exec', '--ns', '--tmpfs', scratch])
      expect(cmdline(init).slice(-2)).toEqual(['--', '-'])
      expect(cmdline(init)).not.toContain('--env')
      expect(cmdline(init).join(' ')).not.toMatch(/bootstrap\.py|TMPDIR|PYTHON/)
      // Neither maps the interpreter or the addon any more, and each holds a fraction of its memory.
      for (const pid of [keeper, init]) {
        const maps = fs.readFileSync(`/proc/${pid}/maps`, 'utf8')
        expect(maps).not.toMatch(/python|\.node/)
        expect(Number(statusOf(pid, 'VmRSS').split(' ')[0])).toBeLessThan(Number(statusOf(program, 'VmRSS').split(' ')[0]) / 3)
      }
      // Their descriptors: /dev/null on 0-2; init nothing else (the pipes it was made with, the
      // policy's paths and its trees are closed once the root is built), the keeper its lifeline
      // and the pidfd it watches the program's exit through.
      const fds = (pid) => fs.readdirSync(`/proc/${pid}/fd`).map((fd) => [Number(fd), fs.readlinkSync(`/proc/${pid}/fd/${fd}`).replace(/:\[\d+\]$/, '')])
      expect(fds(init).sort((a, b) => a[0] - b[0])).toEqual([[0, '/dev/null'], [1, '/dev/null'], [2, '/dev/null']])
      expect(fds(keeper).map(([, what]) => what).sort()).toEqual(['/dev/null', '/dev/null', '/dev/null', 'anon_inode:[pidfd]', 'pipe'])
      // Both have the program's ids (so they signal the program and each other) and no
      // capability at all; neither is dumpable, so the program cannot read their memory (their
      // /proc files then belong to root, not to the ids they share with the program).
      for (const pid of [keeper, init]) {
        for (const field of ['CapEff', 'CapPrm', 'CapInh', 'CapAmb']) expect([pid, field, statusOf(pid, field)]).toEqual([pid, field, '0000000000000000'])
        expect([statusOf(pid, 'Uid'), statusOf(pid, 'Gid')]).toEqual([statusOf(program, 'Uid'), statusOf(program, 'Gid')])
        expect([fs.statSync(`/proc/${pid}/mem`).uid, fs.statSync(`/proc/${pid}/environ`).uid]).toEqual([0, 0])
      }
      // The keeper joined the run's namespaces but its PID namespace: the program cannot name it.
      for (const kind of ['user', 'mnt', 'ipc', 'net']) expect([kind, namespaceOf(keeper, kind)]).toEqual([kind, namespaceOf(program, kind)])
      expect(namespaceOf(keeper, 'pid')).not.toBe(namespaceOf(program, 'pid'))
      expect(namespaceOf(keeper, 'pid')).toBe(namespaceOf(process.pid, 'pid'))
      expect(namespaceOf(init, 'pid')).toBe(namespaceOf(program, 'pid'))
      // The spare still serves its run (PID 2, its parent outside its namespace: 0), which sees
      // only init and itself, and the run's end takes the three of them.
      const seen = 'import os\nreturn [os.getpid(), os.getppid(), sorted(int(p) for p in os.listdir("/proc") if p.isdigit())]'
      expect(await run(runtime, seen)).toEqual({ logs: [], value: [2, 0, [1, 2]] })
      for (const pid of [keeper, init, program]) expect(isAlive(pid)).toBe(false)
    } finally {
      await fiber.dispose()
    }
  })

  it("a program's signals reach neither its keeper nor init, and init's end ends the run", async () => {
    const before = new Set(pythonTemplates())
    const { runtime, fiber } = await load(PythonCodeRuntime, { graceMs: 300 })
    try {
      const [template] = pythonTemplates().filter((pid) => !before.has(pid))
      expect(await run(runtime, 'return 1')).toEqual({ logs: [], value: 1 })
      // kill(-1) from the program reaches every process it may signal in its namespace but init
      // and itself (here: none), and init takes no signal from inside it but those it handles
      // (SIGKILL it cannot; SIGTERM it passes to the run): the host still finds both alive.
      const { keeper, init } = await slimSpare(template)
      const host = { global: 'host', functions: { async alive() { return [isAlive(keeper), isAlive(init)] } } }
      const everyone = [
        'import os, signal, time',
        'signal.signal(signal.SIGTERM, signal.SIG_IGN)',
        'for sig in (signal.SIGTERM, signal.SIGKILL):',
        '    try:',
        '        os.kill(-1, sig)',
        '    except ProcessLookupError:',
        '        print("nothing else to signal")',
        // Landlock's signal scope (ABI 6) refuses these outright; without it init ignores them.
        'for sig in (signal.SIGKILL, signal.SIGTERM):',
        '    try:',
        '        os.kill(1, sig)',
        '    except PermissionError:',
        '        pass',
        'time.sleep(0.2)',
        'return await host.alive({})',
      ].join('\n')
      const alone = 'nothing else to signal'
      expect(await runtime.run({ program: everyone, bindings: [host] })).toEqual({ logs: [alone, alone], value: [true, true] })
      expect([isAlive(keeper), isAlive(init)]).toEqual([false, false])
      // Init killed under a running program ends the run, the program with it.
      const next = await slimSpare(template)
      let running
      const up = new Promise((resolve) => (running = resolve))
      const pending = runtime.run({ program: "import time\nprint('up')\ntime.sleep(20)\nreturn 1", bindings: [], onLog: () => running() })
      await up
      process.kill(next.init, 'SIGKILL')
      expect((await pending).error).toEqual({ kind: 'worker-exit', message: 'python exited (code=null, signal=SIGKILL) before completing' })
      expect([isAlive(next.keeper), isAlive(next.init), isAlive(next.program)]).toEqual([false, false, false])
      expect(await run(runtime, 'return 3')).toEqual({ logs: [], value: 3 })
    } finally {
      await fiber.dispose()
    }
  })

  it("sit, every thread of them, in the run's cgroups, none left in the template's", async () => {
    // Each joins its cgroups as a single thread (`tasks` under v1: docs/sandbox.md), before the
    // keeper forks init and the program: their threads and children inherit them.
    const before = new Set(pythonTemplates())
    const { runtime, fiber } = await load(PythonCodeRuntime, { graceMs: 300 })
    try {
      const [template] = pythonTemplates().filter((pid) => !before.has(pid))
      expect(runtime.sandbox.memoryCgroup).toBe(true)
      expect(await run(runtime, 'return 1')).toEqual({ logs: [], value: 1 })
      const { keeper, init, program } = await slimSpare(template)
      /** Each hierarchy's path for one task: `{ 'pids': '/…', 'memory': '/…', … }`. */
      const cgroupsOf = (pid, tid) =>
        Object.fromEntries(fs.readFileSync(`/proc/${pid}/task/${tid}/cgroup`, 'utf8').trim().split('\n').map((line) => line.split(':')).map(([, names, at]) => [names, at]))
      const tasks = (pid) => fs.readdirSync(`/proc/${pid}/task`)
      const own = new RegExp(`/code-runtime-native-${process.pid}-\\d+$`)
      const theTemplates = cgroupsOf(template, template)
      const runs = cgroupsOf(program, program)
      // The run's own memory and process caps, where the template's are not.
      const moved = Object.keys(runs).filter((names) => runs[names] !== theTemplates[names])
      expect(moved.length).toBeGreaterThanOrEqual(1)
      for (const names of moved) expect([names, runs[names]]).toEqual([names, expect.stringMatching(own)])
      expect(moved.some((names) => names.split(',').includes('memory') || names === '')).toBe(true)
      for (const pid of [keeper, init, program]) for (const tid of tasks(pid)) expect([pid, tid, cgroupsOf(pid, tid)]).toEqual([pid, tid, runs])
      // A run's threads stay there too.
      const threaded = await run(runtime, 'import threading, time\nthreading.Thread(target=time.sleep, args=(0.1,)).start()\nreturn open("/proc/self/cgroup").read() == open(f"/proc/self/task/{threading.enumerate()[1].native_id}/cgroup").read()')
      expect(threaded).toEqual({ logs: [], value: true })
    } finally {
      await fiber.dispose()
    }
  })

  it('take the namespace with them: init and the program die with the keeper', async () => {
    const before = new Set(pythonTemplates())
    const { runtime, fiber } = await load(PythonCodeRuntime, { graceMs: 300 })
    try {
      const [template] = pythonTemplates().filter((pid) => !before.has(pid))
      expect(await run(runtime, 'return 1')).toEqual({ logs: [], value: 1 })
      const { keeper, init, program } = await slimSpare(template)
      process.kill(keeper, 'SIGKILL')
      for (let i = 0; i < 200 && (isAlive(init) || isAlive(program)); i++) await sleep(10)
      expect([isAlive(init), isAlive(program)]).toEqual([false, false])
      // The spare is gone: the next run boots its own child.
      expect(await run(runtime, 'return 2')).toEqual({ logs: [], value: 2 })
    } finally {
      await fiber.dispose()
    }
  })

  it("stay a copy of the interpreter when a run booted its own child, joined to the run's namespaces with the program's ids, no capability, not dumpable; the run ends with the keeper's death", async () => {
    const before = new Set(pythonTemplates())
    const { runtime, fiber } = await load(PythonCodeRuntime, { graceMs: 300 })
    try {
      const [template] = pythonTemplates().filter((pid) => !before.has(pid))
      // The first run has no spare: it boots its own child, whose keeper does not exec the helper
      // (that exec would come before the run's result); init is the helper's static build all
      // the same. Its line says it runs (a keeper killed before the host wrote the run's frames
      // ends it with that write's failure instead).
      let running
      const up = new Promise((resolve) => (running = resolve))
      const pending = runtime.run({ program: "import time\nprint('up')\ntime.sleep(20)\nreturn 1", bindings: [], onLog: () => running() })
      await up
      const python = fs.realpathSync(PYTHON)
      let keeper, init, program
      for (let i = 0; i < 500 && !(init && program && idsTaken(keeper)); i++) {
        await sleep(10)
        keeper = childrenOf(template)[0]
        const children = keeper ? childrenOf(keeper) : []
        init = children.find((pid) => exe(pid) === ROLES)
        program = children.find((pid) => exe(pid) === python)
      }
      expect([exe(keeper), exe(init), exe(program)]).toEqual([python, ROLES, python])
      expect(fs.readFileSync(`/proc/${init}/cmdline`, 'utf8').split('\0')[1]).toBe('joined-init')
      // The keeper holds the program's ids, no capability, and is not dumpable (its /proc files
      // belong to root): the program cannot read its memory; it stands in the run's namespaces
      // but its PID namespace, so the program cannot name it either.
      for (const field of ['CapEff', 'CapPrm', 'CapInh', 'CapAmb']) expect([field, statusOf(keeper, field)]).toEqual([field, '0000000000000000'])
      expect([statusOf(keeper, 'Uid'), statusOf(keeper, 'Gid')]).toEqual([statusOf(program, 'Uid'), statusOf(program, 'Gid')])
      expect([fs.statSync(`/proc/${keeper}/mem`).uid, fs.statSync(`/proc/${keeper}/environ`).uid]).toEqual([0, 0])
      for (const kind of ['user', 'mnt', 'ipc', 'net']) expect([kind, namespaceOf(keeper, kind)]).toEqual([kind, namespaceOf(program, kind)])
      expect(namespaceOf(keeper, 'pid')).toBe(namespaceOf(process.pid, 'pid'))
      // None of the program's descriptors (the host sees its pipes close when the program has
      // gone): the program's pidfd, its lifeline and the roles file it made init from.
      const fds = (pid) => fs.readdirSync(`/proc/${pid}/fd`).map((fd) => fs.readlinkSync(`/proc/${pid}/fd/${fd}`).replace(/:\[\d+\]$/, ''))
      expect(fds(keeper).sort()).toEqual([ROLES, 'anon_inode:[pidfd]', 'pipe'].sort())
      process.kill(keeper, 'SIGKILL')
      expect((await pending).error).toEqual({ kind: 'worker-exit', message: 'python exited (code=null, signal=SIGKILL) before completing' })
      expect([isAlive(init), isAlive(program)]).toEqual([false, false])
    } finally {
      await fiber.dispose()
    }
  })

  it("forward SIGTERM to the program: the host's signal to the run's group ends it", async () => {
    const before = new Set(pythonTemplates())
    const { runtime, fiber } = await load(PythonCodeRuntime, { graceMs: 300 })
    try {
      const [template] = pythonTemplates().filter((pid) => !before.has(pid))
      expect(await run(runtime, 'return 1')).toEqual({ logs: [], value: 1 })
      await slimSpare(template)
      // The program names its run (its scratch directory, on its keeper's command line); the
      // binding signals that keeper's group as the host's teardown does, and the program sleeps on.
      const signalled = []
      const tools = {
        global: 'tools',
        functions: {
          async term(scratch) {
            for (const name of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
              const words = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0')
              if (words[1] === 'joined-keeper' && words[5] === scratch) {
                process.kill(-Number(name), 'SIGTERM')
                signalled.push(Number(name))
              }
            }
            return signalled.length
          },
        },
      }
      const program = 'import os, time\nawait tools.term(os.environ["TMPDIR"])\ntime.sleep(30)\nreturn "slept"'
      const r = await runtime.run({ program, bindings: [tools] })
      expect(signalled).toHaveLength(1)
      expect(r).toEqual({ logs: [], error: { kind: 'worker-exit', message: 'python exited (code=null, signal=SIGTERM) before completing' } })
    } finally {
      await fiber.dispose()
    }
  })
})

describe("the next run's spare", () => {
  it('boots once a run is over when runs come paced; two boot beside the run when they come back to back, and one is left after a pause', async () => {
    const before = new Set(pythonTemplates())
    const { runtime, fiber } = await load(PythonCodeRuntime, { graceMs: 300 })
    try {
      const [template] = pythonTemplates().filter((pid) => !before.has(pid))
      const { forked, probe } = forkedProbe(template)
      const run = (count, ms) => runtime.run({ program: `await probe.forked([${count}, ${ms}])\nreturn 1`, bindings: [probe] })
      expect((await run(0, 0)).value).toBe(1)
      // Paced: the spare booted after the first result, and nothing boots beside the second run.
      await sleep(500)
      expect((await run(2, 500)).value).toBe(1)
      expect(forked[1]).toBe(1)
      // Back to back (sooner than a spare boots).
      await twoDeepInARow(run, forked, template)
    } finally {
      await fiber.dispose()
    }
  })
})

describe("the spare booted after a paced run's result", () => {
  it("boots once the result has reached its caller's continuation", async () => {
    const before = new Set(pythonTemplates())
    const { runtime, fiber } = await load(PythonCodeRuntime)
    try {
      const [template] = pythonTemplates().filter((pid) => !before.has(pid))
      expect((await runtime.run({ program: 'return 1', bindings: [] })).value).toBe(1)
      await sleep(500)
      // The spare booted after the first result serves this run; its own spare (a thread of the
      // host's that asks the template for a fork) is not started until this continuation has run.
      expect((await runtime.run({ program: 'return 2', bindings: [] })).value).toBe(2)
      expect([threadsNamedNow('crn-python-spar'), childrenOf(template)]).toEqual([[], []])
      await new Promise((resolve) => setImmediate(resolve))
      for (let i = 0; i < 500 && childrenOf(template).length === 0; i++) await sleep(10)
      expect(childrenOf(template)).toHaveLength(1)
      // A run started from the continuation boots that spare first and takes it (the template
      // forks nothing more for it): `twoDeepInARow` above counts the forks.
    } finally {
      await fiber.dispose()
    }
  })
})

describe('a spare booted for a file policy', () => {
  it('is held two deep while runs under the policy come back to back, and one is left after a pause', async () => {
    const before = new Set(pythonTemplates())
    const { fiber, ctx } = await load(PythonPtcRuntime, { timeoutMs: 30_000 })
    const runtime = ctx.ptcRuntime
    try {
      const [template] = pythonTemplates().filter((pid) => !before.has(pid))
      const workspace = fs.mkdtempSync(path.join(TMP, 'workspace-deep-'))
      const { forked, probe } = forkedProbe(template)
      const run = (count, ms) =>
        runtime.run(
          runtime.resolve({
            program: `await probe.forked([${count}, ${ms}])\nreturn 1`,
            bindings: [probe],
            cwd: workspace,
            sandboxPolicy: { mode: 'read-only', workspaceRoot: workspace },
          }),
        )
      // The first run boots its own child; the second takes the spare booted after it.
      expect((await run(0, 0)).value).toBe(1)
      expect((await run(0, 0)).value).toBe(1)
      await twoDeepInARow(run, forked, template)
    } finally {
      await fiber.dispose()
    }
  })

  it('that a run under another policy replaced is gone, with its directory, once dispose resolves', async () => {
    const before = new Set(pythonTemplates())
    const { fiber, ctx } = await load(PythonPtcRuntime, { timeoutMs: 30_000 })
    const runtime = ctx.ptcRuntime
    const [template] = pythonTemplates().filter((pid) => !before.has(pid))
    const [a, b] = ['a', 'b'].map((name) => fs.mkdtempSync(path.join(TMP, `workspace-${name}-`)))
    // The run under B moves B away while it runs, so no spare boots for B after it: dispose then
    // has only A's to wait for.
    const move = { global: 'host', functions: { async move() { fs.renameSync(b, `${b}.moved`); return 0 } } }
    const under = (workspace, program) =>
      runtime.run(runtime.resolve({ program, bindings: [move], cwd: workspace, sandboxPolicy: { mode: 'read-only', workspaceRoot: workspace } }))
    expect((await under(a, 'return 1')).value).toBe(1)
    const { keeper, init, program } = await slimSpare(template)
    // The run under B takes no spare; once it is over, A's spare is killed on a thread of its own.
    expect((await under(b, 'await host.move({})\nreturn 2')).value).toBe(2)
    await fiber.dispose()
    expect([isAlive(keeper), isAlive(init), isAlive(program)]).toEqual([false, false, false])
    expect(stagingDirs(TMP)).toEqual([])
    expect(liveProcesses(TMP, { templates: false })).toEqual([])
  })
})

/** Thread stacks of the size the addon gives its spare threads: 256 KiB under a 4 KiB guard. */
function spareSizedStacks() {
  const maps = fs.readFileSync('/proc/self/maps', 'utf8').trim().split('\n').map((line) => {
    const [range, perms, , , inode] = line.split(/\s+/)
    const [start, end] = range.split('-').map((x) => parseInt(x, 16))
    return { start, end, perms, inode }
  })
  return maps.filter((m, i) => i > 0 && m.perms === 'rw-p' && m.inode === '0' && m.end - m.start === 256 << 10 && maps[i - 1].perms === '---p' && maps[i - 1].end === m.start && maps[i - 1].end - maps[i - 1].start === 4096).length
}

describe("a spare's boot thread", () => {
  it('leaves no stack behind once it is over, whenever the collector gets to the spare a run took', async () => {
    const { fiber, ctx } = await load(PythonPtcRuntime, { timeoutMs: 30_000 })
    const runtime = ctx.ptcRuntime
    const workspace = fs.mkdtempSync(path.join(TMP, 'workspace-stacks-'))
    const under = () => runtime.run(runtime.resolve({ program: 'return 1', bindings: [], cwd: workspace, sandboxPolicy: { mode: 'read-only', workspaceRoot: workspace } }))
    expect((await under()).value).toBe(1)
    const before = spareSizedStacks()
    // Each run takes the spare booted for its policy and boots the next one on a new thread.
    for (let i = 0; i < 30; i++) expect((await under()).value).toBe(1)
    // A thread kept joinable until its spare's JS object was finalized kept its stack: one more
    // per run (a soak of policy runs grew by about 1.4 KB a run).
    expect(spareSizedStacks() - before).toBeLessThan(5)
    await fiber.dispose()
  })
})

describe('a template that dies', () => {
  it('between runs: the next run forks from a new one', async () => {
    const before = new Set(pythonTemplates())
    const { runtime, fiber } = await load(PythonCodeRuntime, { graceMs: 300 })
    try {
      const [first] = pythonTemplates().filter((pid) => !before.has(pid))
      expect(await run(runtime, 'return 1')).toEqual({ logs: [], value: 1 })
      await kill(first)
      expect(await run(runtime, 'return 2')).toEqual({ logs: [], value: 2 })
      expect(await run(runtime, 'import sys\nreturn "template.py" in " ".join(sys.orig_argv)')).toEqual({ logs: [], value: true })
      const now = pythonTemplates().filter((pid) => !before.has(pid))
      expect(now).toHaveLength(1)
      expect(now[0]).not.toBe(first)
    } finally {
      await fiber.dispose()
    }
  })

  it('during a run: the run in flight ends as it would have', async () => {
    const before = new Set(pythonTemplates())
    const { runtime, fiber } = await load(PythonCodeRuntime, { graceMs: 300 })
    try {
      const [template] = pythonTemplates().filter((pid) => !before.has(pid))
      const pending = run(runtime, 'import time\ntime.sleep(0.6)\nprint("slept")\nreturn 3')
      await sleep(250)
      await kill(template)
      expect(await pending).toEqual({ logs: ['slept'], value: 3 })
      expect(await run(runtime, 'return 4')).toEqual({ logs: [], value: 4 })
    } finally {
      await fiber.dispose()
    }
  })

  it('that names a process it did not fork is replaced, the process is left alone, and the run spawns its own child', async () => {
    // An interpreter that starts a "template" which says it is ready and answers every fork with
    // the right id, an exit pipe, and the pid of a process of this test's (a group of its own):
    // were the host to believe it, it would signal that group when the run ends.
    const decoy = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' })
    const asked = path.join(BINS, 'liar-asked')
    const liar = script(
      BINS,
      'liar.py',
      `import json, os, socket
c = socket.socket(fileno=3)
c.send(b'{"type":"template-ready","libraryBytes":0}')
while True:
    m, fds, _, _ = socket.recv_fds(c, 65536, 8)
    if not m:
        raise SystemExit(0)
    open(${JSON.stringify(asked)}, "a").write("fork\\n")
    r, w = os.pipe()
    socket.send_fds(c, [json.dumps({"type": "forked", "id": json.loads(m)["id"], "pid": ${decoy.pid}}).encode()], [r])
`,
    )
    const bin = fakePython(BINS, 'lying-template', { run: `case "$3" in */template.py) exec ${PYTHON} ${liar};; esac\nexec ${PYTHON} "$@"` })
    const { runtime, fiber } = await load(PythonCodeRuntime, { pythonBin: bin, graceMs: 300 })
    try {
      for (let i = 0; i < 3; i++) expect(await run(runtime, 'import sys\nreturn ["template.py" in " ".join(sys.orig_argv), ' + i + ']')).toEqual({ logs: [], value: [false, i] })
      expect(fs.readFileSync(asked, 'utf8').split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(3)
      expect(isAlive(decoy.pid)).toBe(true)
    } finally {
      await fiber.dispose()
      decoy.kill('SIGKILL')
    }
  })
})

describe('a template that says its library maps more than the library does', () => {
  it('is refused at start: runs spawn their own child, whose address space is the budget alone', async () => {
    // The host adds what the template says its library maps to each forked child's RLIMIT_AS:
    // a template claiming 64 MiB (the library maps under 1 MiB) would widen every run's limit.
    const started = path.join(BINS, 'greedy-pid')
    const greedy = script(
      BINS,
      'greedy.py',
      `import os, socket, time
open(${JSON.stringify(started)}, "w").write(str(os.getpid()))
c = socket.socket(fileno=3)
c.send(b'{"type":"template-ready","libraryBytes":${64 << 20}}')
time.sleep(60)
`,
    )
    const bin = fakePython(BINS, 'greedy-template', { run: `case "$3" in */template.py) exec ${PYTHON} ${greedy};; esac\nexec ${PYTHON} "$@"` })
    const { runtime, fiber } = await load(PythonCodeRuntime, { pythonBin: bin, graceMs: 300, addressSpaceMb: 700 })
    try {
      expect(isAlive(Number(fs.readFileSync(started, 'utf8')))).toBe(false)
      const program = 'import resource, sys\nreturn ["template.py" in " ".join(sys.orig_argv), resource.getrlimit(resource.RLIMIT_AS)[0]]'
      expect(await run(runtime, program)).toEqual({ logs: [], value: [false, 700 * 2 ** 20] })
    } finally {
      await fiber.dispose()
    }
  })
})

describe('a template that names a process it did not fork and says it has ended', () => {
  it('is believed only as far as the exit record goes: the named process is never signalled', async () => {
    // As the liar above, but it writes an exit record first, as a template does for a child that
    // died at once (reaped before the host could see it as the template's child): the host takes
    // the child as gone and signals its pid only while no process has it, so the decoy, alive
    // under that pid, is left alone however the run ends.
    const decoy = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' })
    const liar = script(
      BINS,
      'liar-ended.py',
      `import json, os, socket
c = socket.socket(fileno=3)
c.send(b'{"type":"template-ready","libraryBytes":0}')
while True:
    m, fds, _, _ = socket.recv_fds(c, 65536, 8)
    if not m:
        raise SystemExit(0)
    for fd in fds:
        os.close(fd)
    r, w = os.pipe()
    os.write(w, json.dumps({"code": 0, "signal": None, "cpuMs": 0, "maxRssBytes": 0}).encode())
    os.close(w)
    socket.send_fds(c, [json.dumps({"type": "forked", "id": json.loads(m)["id"], "pid": ${decoy.pid}}).encode()], [r])
`,
    )
    const bin = fakePython(BINS, 'lying-ended-template', { run: `case "$3" in */template.py) exec ${PYTHON} ${liar};; esac\nexec ${PYTHON} "$@"` })
    const { runtime, fiber } = await load(PythonCodeRuntime, { pythonBin: bin, graceMs: 300 })
    try {
      // One run: the host waits out the decoy's group as it would a run's (the grace, a final
      // SIGKILL it does not send, two seconds more) before it gives up on it.
      const r = await run(runtime, 'return 1')
      expect(r, JSON.stringify(r)).toEqual({ logs: [], error: { kind: 'worker-exit', message: expect.any(String) } })
      expect(isAlive(decoy.pid)).toBe(true)
    } finally {
      await fiber.dispose()
      decoy.kill('SIGKILL')
    }
  })
})

describe.runIf(process.getuid() === 0)('as an unprivileged user', () => {
  it("a host process of another uid forks its runs from its own template", async () => {
    const dir = fs.mkdtempSync(path.join(TMP, 'unprivileged-'))
    fs.chownSync(dir, 65534, 65534)
    fs.chmodSync(TMP, 0o711)
    const { pkg, node } = unprivilegedPackage(REPO, dir, ['py'])
    const script = path.join(pkg, 'host.mjs')
    fs.writeFileSync(
      script,
      `
      import { Context } from 'cordis'
      import { PythonCodeRuntime } from './lib/index.mjs'
      const ctx = new Context()
      const fiber = await ctx.plugin(PythonCodeRuntime, { pythonBin: '/usr/bin/python3', graceMs: 300 })
      const results = []
      // The first run boots its own child, each after it takes the spare booted after the one
      // before: init is the helper's static build in both.
      const program = 'import os, sys\\nstatus = open("/proc/self/status").read()\\ninit = open("/proc/1/cmdline", "rb").read().split(b"\\\\0")[1].decode()\\nreturn ["template.py" in " ".join(sys.orig_argv), os.getpid(), "CapEff:\\\\t0000000000000000" in status, "Seccomp:\\\\t2" in status, init]'
      // Several: a keeper of another uid writes its init's maps while init starts (a race it
      // once lost now and then: a root host's keeper would not see it).
      for (let i = 0; i < 8; i++) results.push(await ctx.codeRuntime.run({ program, bindings: [] }))
      await fiber.dispose()
      process.stdout.write(JSON.stringify(results))
      `,
    )
    const { code, stdout, stderr } = await runAs(node, script, { uid: 65534, gid: 65534, cwd: dir, env: { PATH: '/usr/bin:/bin', TMPDIR: dir } })
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(JSON.parse(stdout)).toEqual([
      ...Array(8).fill({ logs: [], value: [true, 2, true, true, 'joined-init'] }),
    ])
  })
})
