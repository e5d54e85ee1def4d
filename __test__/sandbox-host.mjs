// A host process for __test__/sandbox-containment.test.mjs: it loads both runtimes the way a user
// does and plays one scenario, so the suite can run it as this process's user and as another, and
// SIGKILL it. `node sandbox-host.mjs <scenario> <json options>`; results are one JSON line on
// stdout. Plain module (no test framework), copied with the package for the unprivileged pass.
import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { Context } from 'cordis'
import { IsolateCodeRuntime, PythonCodeRuntime, PythonPtcRuntime } from '../lib/index.mjs'

const [scenario, json] = process.argv.slice(2)
const options = JSON.parse(json ?? '{}')

async function load(Class, config = {}) {
  const ctx = new Context()
  await ctx.plugin(Class, config)
  return { ctx, runtime: ctx.get('codeRuntime') }
}

const python = () => load(PythonCodeRuntime, { pythonBin: options.python, cpuSeconds: options.cpuSeconds ?? 10, graceMs: 300 })

/** The host's kernel slab, in bytes (`Slab:` of /proc/meminfo). */
function slabBytes() {
  return Number(/^Slab:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/meminfo', 'utf8'))[1]) * 1024
}

/** `Uid:` of /proc/<pid>/status: real, effective, saved, fs. */
function uidsOf(pid) {
  return /^Uid:\s+(.*)$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1].split(/\s+/).map(Number)
}

/** Live processes whose command line names `marker` (the run's staging directory is in argv). */
function processesNaming(marker) {
  const found = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8')
      // The helper's keeper and init are the host's own (trusted) processes: the program is not.
      const helper = cmdline.split('\0')[0].endsWith('code-runtime-native-sandbox')
      if (cmdline.includes(marker) && !helper && !cmdline.includes('sandbox-host.mjs')) found.push(Number(name))
    } catch {}
  }
  return found
}

/**
 * Whether a spare's keeper (a Python spare's keeper runs as the helper in its `keeper` role, or
 * `joined-keeper` with the helper's static build: docs/python.md#spares) is among this host's
 * grandchildren within 5 s: the policy spare a run under a policy boots at its end.
 */
async function policySpareBooted() {
  const parent = (pid) => Number(/^\S+ \(.*\) \S (\d+)/s.exec(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))[1])
  for (let i = 0; i < 500; i++) {
    for (const name of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      try {
        const words = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0')
        if (words[0] === 'code-runtime-native-sandbox' && ['keeper', 'joined-keeper'].includes(words[1]) && parent(parent(Number(name))) === process.pid) return true
      } catch {}
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return false
}

/**
 * Unix socket servers where hosts usually keep them: /tmp, the host's TMPDIR, /run and /var/tmp
 * (where this user may create one), and the abstract namespace. Each counts the peers it accepted.
 */
async function socketServers() {
  const tag = `code-runtime-native-test-${process.pid}`
  const places = [
    ['/tmp', path.join('/tmp', `${tag}.sock`)],
    ['TMPDIR', path.join(os.tmpdir(), `${tag}.sock`)],
    ['/run', path.join('/run', `${tag}.sock`)],
    ['/var/tmp', path.join('/var/tmp', `${tag}.sock`)],
    ['abstract', `\0${tag}`],
  ]
  const servers = []
  for (const [place, address] of places) {
    const server = { place, address, accepted: 0 }
    server.net = net.createServer((s) => {
      server.accepted++
      s.end()
    })
    const listening = await new Promise((resolve) => {
      server.net.once('error', () => resolve(false))
      server.net.listen(address, () => resolve(true))
    })
    if (listening) servers.push(server)
  }
  return servers
}

const REACH_SOCKETS = (addresses) => `
import socket
out = []
for address in ${JSON.stringify(addresses)}:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(address)
        out.append("connected")
    except OSError as e:
        out.append(type(e).__name__)
    finally:
        s.close()
return out`

const LIST_ROOT = `
import os
def ls(p):
    try:
        return sorted(os.listdir(p))
    except OSError as e:
        return type(e).__name__
return {"/": ls("/"), "/dev": ls("/dev"), "/etc": ls("/etc"), "uid": [os.getuid(), os.getgid()], "cwd": os.getcwd()}`

/** Creates empty directories in its scratch until the kernel refuses; the host's slab at the peak. */
const INODE_FLOOD = `
import os
base = os.environ["TMPDIR"]
n, err = 0, None
try:
    while n < 400000:
        os.mkdir(os.path.join(base, str(n)))
        n += 1
except OSError as e:
    err = type(e).__name__
return [n, err, await tools.slab({})]`

const LOWERED_CPU_LIMIT = (seconds) => `
import resource, time
resource.setrlimit(resource.RLIMIT_CPU, (1, resource.getrlimit(resource.RLIMIT_CPU)[1]))
t = time.process_time()
while time.process_time() - t < ${seconds}:
    pass
return "done"`

/**
 * Creates kernel objects of one kind until something stops it, reporting the bytes it made so
 * far to the host every few MiB (a run the kernel kills cannot report at the end).
 */
const FLOOD = {
  sockets: `
import os, socket, time
made, keep = 0, []
while made < 4 << 30:
    try:
        a, b = socket.socketpair()
    except OSError:
        # Out of descriptors: a child holds every socket so far, and this process goes on.
        if os.fork() == 0:
            time.sleep(1000)
            os._exit(0)
        for pair in keep:
            pair[0].close(); pair[1].close()
        keep = []
        continue
    a.setblocking(False)
    try:
        while True:
            made += a.send(b"x" * 65536)
    except BlockingIOError:
        pass
    keep.append((a, b))
    await tools.progress({"made": made})`,
  memfd: `
import os
made, keep = 0, []
while made < 4 << 30:
    fd = os.memfd_create("x")
    for _ in range(16):
        made += os.write(fd, b"x" * (1 << 20))
    keep.append(fd)
    await tools.progress({"made": made})`,
  sysvShm: `
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
made = 0
while made < 4 << 30:
    segment = libc.shmget(0, 16 << 20, 0o1600)
    address = libc.shmat(segment, None, 0)
    ctypes.memset(address, 1, 16 << 20)
    libc.shmdt(ctypes.c_void_p(address))
    made += 16 << 20
    await tools.progress({"made": made})`,
}

const LIMITS = `
import resource
return [list(resource.getrlimit(resource.RLIMIT_NOFILE)), list(resource.getrlimit(resource.RLIMIT_NPROC))]`

const SELF_UID = `
import os, subprocess
# A process of the run's that names a marker (the program's own command line is its
# interpreter's, which a run forked from the template shares with the host's trusted processes).
marker = os.path.join(os.environ["TMPDIR"], "uid-marker")
child = subprocess.Popen(["/bin/sh", "-c", "echo up; sleep 30; :", marker], stdout=subprocess.PIPE)
# The shell runs (under its own command line) once it has said so.
child.stdout.readline()
try:
    return await tools.uids({"marker": marker})
finally:
    child.kill()
    child.wait()`

/** Every file and network effect a policy decides, each `ok` or the error's class and errno. */
const POLICY_PROBE = (paths, port) => `
import errno, os, socket
p = ${JSON.stringify(paths)}
def attempt(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return type(e).__name__ + " " + (errno.errorcode.get(e.errno) or str(e.errno))
def tcp():
    s = socket.create_connection(("127.0.0.1", ${port}), timeout=2)
    s.close()
return {
    "cwd": os.getcwd(),
    "read workspace": attempt(lambda: open(p["inside"]).read()),
    "write workspace": attempt(lambda: open(p["written"], "w").write("x")),
    "write scratch": attempt(lambda: open(os.path.join(os.environ["TMPDIR"], "s"), "w").write("x")),
    "read another workspace": attempt(lambda: open(p["other"]).read()),
    "read a private home": attempt(lambda: open(p["home"]).read()),
    "tcp to the host": attempt(tcp),
}`

/** Each lock a program can take on a workspace file through a read-only descriptor (a shared
 * record lock needs no more), `ok` or the error's class and errno; then, while it still holds
 * what it got, the host's own attempts (tools.host). */
const LOCK_PROBE = (paths) => `
import errno, fcntl, json, struct
p = json.loads(${JSON.stringify(JSON.stringify(paths))})
def attempt(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return type(e).__name__ + " " + (errno.errorcode.get(e.errno) or str(e.errno))
held = [open(p[name], "rb") for name in ("flock", "lockf", "ofd")]
flock_fd, lockf_fd, ofd_fd = held
# struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for an open file description lock).
shared = struct.pack("hhqqi4x", fcntl.F_RDLCK, 0, 0, 0, 0)
out = {
    "flock": attempt(lambda: fcntl.flock(flock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)),
    "lockf": attempt(lambda: fcntl.lockf(lockf_fd, fcntl.LOCK_SH | fcntl.LOCK_NB)),
    "lockf, waiting": attempt(lambda: fcntl.lockf(lockf_fd, fcntl.LOCK_SH)),
    "ofd": attempt(lambda: fcntl.fcntl(ofd_fd, fcntl.F_OFD_SETLK, shared)),
    "test for a lock": attempt(lambda: fcntl.fcntl(lockf_fd, fcntl.F_GETLK, shared)),
}
def query(uri):
    import sqlite3
    try:
        with sqlite3.connect(uri, uri=True) as db:
            return db.execute("select n from t").fetchall()[0][0]
    except Exception as e:
        return type(e).__name__ + ": " + str(e)
out["sqlite"] = query("file:" + p["db"])
out["sqlite, immutable"] = query("file:" + p["db"] + "?immutable=1")
if p["lease"]:
    out["lease"] = attempt(lambda: fcntl.fcntl(ofd_fd, fcntl.F_SETLEASE, fcntl.F_RDLCK))
out["host"] = await tools.host({})
return out`

/** The host's own exclusive locks on the same files, non-blocking: `ok` or the errno's name. */
const HOST_LOCKS = `
import errno, fcntl, json, struct, sys
p = json.loads(sys.argv[1])
def attempt(name, f):
    try:
        with open(p[name], "r+b") as fd:
            f(fd)
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno) or str(e.errno)
exclusive = struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0)
print(json.dumps({
    "flock": attempt("flock", lambda fd: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)),
    "lockf": attempt("lockf", lambda fd: fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)),
    "ofd": attempt("ofd", lambda fd: fcntl.fcntl(fd, fcntl.F_OFD_SETLK, exclusive)),
}))`

const scenarios = {
  /** One Python run per file-policy mode on the current seam, probing what the policy decides. */
  async policy() {
    const base = os.tmpdir()
    const make = (name, files) => {
      const dir = fs.mkdtempSync(path.join(base, `${name}-`))
      for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text)
      return dir
    }
    const workspace = make('workspace', { 'inside.txt': 'inside' })
    fs.mkdirSync(path.join(workspace, 'sub'))
    const other = make('other', { 'secret.txt': 'other' })
    const home = make('home', { 'secret.txt': 'home' })
    const server = net.createServer((s) => s.end())
    await new Promise((r) => server.listen(0, '127.0.0.1', r))
    const ctx = new Context()
    await ctx.plugin(PythonPtcRuntime, { pythonBin: options.python, graceMs: 300 })
    const runtime = ctx.get('ptcRuntime')
    const out = { hostUid: process.getuid(), sandboxMode: runtime.sandboxMode, runs: {}, owners: {} }
    for (const mode of ['read-only', 'workspace-write', 'danger-full-access']) {
      const written = path.join(workspace, `written-${mode}.txt`)
      const paths = { inside: path.join(workspace, 'inside.txt'), written, other: path.join(other, 'secret.txt'), home: path.join(home, 'secret.txt') }
      const spec = runtime.resolve({ program: POLICY_PROBE(paths, server.address().port), bindings: [], cwd: path.join(workspace, 'sub'), sandboxPolicy: { mode, workspaceRoot: workspace } })
      out.runs[mode] = await runtime.run(spec)
      out.owners[mode] = fs.existsSync(written) ? fs.statSync(written).uid : null
    }
    // A refusal the program lets through: the host's `denied`.
    const refused = `open(${JSON.stringify(path.join(workspace, 'refused.txt'))}, "w")`
    out.denied = await runtime.run(runtime.resolve({ program: refused, bindings: [], cwd: workspace, sandboxPolicy: { mode: 'read-only', workspaceRoot: workspace } }))
    out.workspace = workspace
    server.close()
    return out
  },

  /**
   * Issue 26: a run cannot choose what a later run can read. Run A (workspace-write on W1) plants
   * `W1/src -> <a host directory holding a 0600 file>`; a later run names that link as its cwd or
   * workspace, before resolve() (refused there) or swapped in between resolve() and run() (the
   * sandbox helper refuses it: nothing runs, no enforcement is claimed).
   */
  async planted() {
    const base = os.tmpdir()
    const hostDir = fs.mkdtempSync(path.join(base, 'host-'))
    const secret = path.join(hostDir, 'secret.txt')
    fs.writeFileSync(secret, 'host secret', { mode: 0o600 })
    const w1 = fs.mkdtempSync(path.join(base, 'w1-'))
    const w2 = fs.mkdtempSync(path.join(base, 'w2-'))
    fs.mkdirSync(path.join(w1, 'src'))
    const ctx = new Context()
    await ctx.plugin(PythonPtcRuntime, { pythonBin: options.python, graceMs: 300 })
    const runtime = ctx.get('ptcRuntime')
    const out = {}
    const attempt = (f) => {
      try {
        return f()
      } catch (error) {
        return { threw: error.name, message: error.message }
      }
    }
    // Run A plants the link from inside its own run (its workspace is writable).
    const plant = `
import os, shutil
shutil.rmtree(${JSON.stringify(path.join(w1, 'src'))})
os.symlink(${JSON.stringify(hostDir)}, ${JSON.stringify(path.join(w1, 'src'))})
return os.path.islink(${JSON.stringify(path.join(w1, 'src'))})`
    out.plant = await runtime.run(runtime.resolve({ program: plant, bindings: [], cwd: w1, sandboxPolicy: { mode: 'workspace-write', workspaceRoot: w1 } }))
    const READ = 'return open("secret.txt").read()'
    // Run B: read-only on W2, cwd the planted link.
    out.cwdLink = attempt(() => runtime.resolve({ program: READ, bindings: [], cwd: path.join(w1, 'src'), sandboxPolicy: { mode: 'read-only', workspaceRoot: w2 } }))
    // The planted link as the workspace itself, and a link to '/' as the workspace.
    out.rootLink = attempt(() => runtime.resolve({ program: READ, bindings: [], cwd: w2, sandboxPolicy: { mode: 'read-only', workspaceRoot: path.join(w1, 'src') } }))
    fs.symlinkSync('/', path.join(w1, 'slash'))
    out.slashLink = attempt(() => runtime.resolve({ program: READ, bindings: [], cwd: w2, sandboxPolicy: { mode: 'read-only', workspaceRoot: path.join(w1, 'slash') } }))
    // Swapped between resolve() and run(): the cwd, then the workspace.
    const later = path.join(w1, 'later')
    fs.mkdirSync(later)
    const cwdSpec = runtime.resolve({ program: READ, bindings: [], cwd: later, sandboxPolicy: { mode: 'read-only', workspaceRoot: w2 } })
    fs.rmdirSync(later)
    fs.symlinkSync(hostDir, later)
    out.cwdSwapped = await runtime.run(cwdSpec)
    const w3 = fs.mkdtempSync(path.join(base, 'w3-'))
    const rootSpec = runtime.resolve({
      program: `return open(${JSON.stringify(path.join(w3, 'secret.txt'))}).read()`,
      bindings: [],
      cwd: w2,
      sandboxPolicy: { mode: 'read-only', workspaceRoot: w3 },
    })
    fs.rmdirSync(w3)
    fs.symlinkSync(hostDir, w3)
    out.rootSwapped = await runtime.run(rootSpec)
    // A run on W1 itself still sees the planted link only inside its own root (no host tree there).
    out.insideW1 = await runtime.run(runtime.resolve({ program: 'return open("src/secret.txt").read()', bindings: [], cwd: w1, sandboxPolicy: { mode: 'read-only', workspaceRoot: w1 } }))
    // A spare booted for a policy (after a run under it) holds the directory its path named then:
    // another directory, then a link, put at that path before the next run under the same policy.
    const w4 = fs.mkdtempSync(path.join(base, 'w4-'))
    fs.writeFileSync(path.join(w4, 'note.txt'), 'first')
    fs.writeFileSync(path.join(hostDir, 'note.txt'), 'host secret')
    const noteSpec = runtime.resolve({ program: 'return open("note.txt").read()', bindings: [], cwd: w4, sandboxPolicy: { mode: 'read-only', workspaceRoot: w4 } })
    out.underSpare = { first: await runtime.run(noteSpec), spareBefore: await policySpareBooted() }
    fs.renameSync(w4, `${w4}.a`)
    fs.mkdirSync(w4)
    fs.writeFileSync(path.join(w4, 'note.txt'), 'second')
    out.underSpare.replaced = await runtime.run(noteSpec)
    out.underSpare.spareBetween = await policySpareBooted()
    fs.renameSync(w4, `${w4}.b`)
    fs.symlinkSync(hostDir, w4)
    out.underSpare.linked = await runtime.run(noteSpec)
    out.paths = { w1, w2, w3, w4, hostDir }
    return out
  },

  /** Per mode, a run's locks on workspace files it may only read, and the host's on the same. */
  async locks() {
    const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'workspace-'))
    const ctx = new Context()
    await ctx.plugin(PythonPtcRuntime, { pythonBin: options.python, graceMs: 300 })
    const runtime = ctx.get('ptcRuntime')
    const out = {}
    for (const mode of ['read-only', 'workspace-write']) {
      const paths = {}
      for (const name of ['flock', 'lockf', 'ofd']) {
        paths[name] = path.join(workspace, `${mode}-${name}`)
        fs.writeFileSync(paths[name], 'data')
      }
      paths.db = path.join(workspace, `${mode}.db`)
      execFileSync(options.python, ['-c', 'import sqlite3, sys\nwith sqlite3.connect(sys.argv[1]) as db: db.executescript("create table t (n); insert into t values (7)")', paths.db])
      // A lease the run held would keep the host's own open() waiting for the lease-break time
      // (45 s): asked for only where it must be refused.
      paths.lease = mode === 'read-only'
      const host = {
        global: 'tools',
        functions: {
          host: () =>
            new Promise((resolve, reject) =>
              execFile(options.python, ['-c', HOST_LOCKS, JSON.stringify(paths)], (error, stdout) =>
                error ? reject(error) : resolve(JSON.parse(stdout)),
              ),
            ),
        },
      }
      const spec = runtime.resolve({ program: LOCK_PROBE(paths), bindings: [host], cwd: workspace, sandboxPolicy: { mode, workspaceRoot: workspace } })
      out[mode] = await runtime.run(spec)
    }
    return out
  },

  /** Everything a run could reach of the host, measured from inside and from the host. */
  async reach() {
    const { runtime } = await python()
    const servers = await socketServers()
    const out = { hostUid: process.getuid(), sandbox: runtime.sandbox, interpreter: runtime.interpreter.executable }
    out.sockets = servers.map((s) => s.place)
    const reached = await runtime.run({ program: REACH_SOCKETS(servers.map((s) => s.address)), bindings: [] })
    out.connects = reached.value ?? reached
    out.accepted = servers.map((s) => s.accepted)
    for (const s of servers) s.net.close()
    out.listing = await runtime.run({ program: LIST_ROOT, bindings: [] })
    out.tmpdir = os.tmpdir()
    const tools = {
      global: 'tools',
      functions: {
        slab: async () => slabBytes(),
        // The uids of the run's processes as this host's kernel sees them.
        uids: async ({ marker }) => processesNaming(marker).map(uidsOf),
      },
    }
    out.selfUid = await runtime.run({ program: SELF_UID, bindings: [tools] })
    const before = slabBytes()
    out.flood = await runtime.run({ program: INODE_FLOOD, bindings: [tools] })
    out.slabBefore = before
    out.limits = await runtime.run({ program: LIMITS, bindings: [] })
    // Where a memory cgroup caps the run, every kind of object counts against it.
    if (runtime.sandbox.memoryCgroup) {
      const small = await load(PythonCodeRuntime, { pythonBin: options.python, addressSpaceMb: 128, graceMs: 300 })
      out.floods = {}
      for (const [kind, program] of Object.entries(FLOOD)) {
        let made = 0
        const progress = { global: 'tools', functions: { progress: async (p) => ((made = p.made), 1) } }
        out.floods[kind] = { result: await small.runtime.run({ program, bindings: [progress] }), made }
      }
    }
    out.loweredLimitShortRun = await runtime.run({ program: LOWERED_CPU_LIMIT(0.135), bindings: [] })
    out.loweredLimitLongRun = await runtime.run({ program: LOWERED_CPU_LIMIT(3), bindings: [] })
    const isolates = await load(IsolateCodeRuntime, { containment: 'process' })
    out.isolateSandbox = isolates.runtime.sandbox
    out.isolate = await isolates.runtime.run({ program: 'return 1', bindings: [] })
    return out
  },

  /** Two Python runs (each with a descendant) and two isolate runs in flight, then waits. */
  async inflight() {
    const py = await python()
    const isolates = await load(IsolateCodeRuntime, { containment: 'process' })
    const started = []
    const ready = { global: "tools", functions: { ready: async () => started.push(1) } }
    const hang = `
import subprocess, time
subprocess.Popen(["sleep", "1000"])
await tools.ready({})
time.sleep(1000)`
    for (let i = 0; i < 2; i++) {
      py.runtime.run({ program: hang, bindings: [ready] })
      isolates.runtime.run({ program: 'await tools.ready({}); for (;;) {}', bindings: [ready] })
    }
    while (started.length < 4) await new Promise((r) => setTimeout(r, 20))
    // The runtimes keep no handle alive on their own: this host waits to be killed.
    setInterval(() => {}, 1 << 30)
    const { namespaces, privateRoot } = py.runtime.sandbox
    return { ready: true, ownRoot: namespaces && privateRoot }
  },

  /** A fresh load of both runtimes and one run each: what the next start of the addon does. */
  async load() {
    const py = await python()
    const isolates = await load(IsolateCodeRuntime, { containment: 'process' })
    const out = {
      python: await py.runtime.run({ program: 'return 1', bindings: [] }),
      isolate: await isolates.runtime.run({ program: 'return 1', bindings: [] }),
    }
    await py.ctx.registry.get(PythonCodeRuntime)?.dispose?.()
    await isolates.ctx.registry.get(IsolateCodeRuntime)?.dispose?.()
    return out
  },
}

const result = await scenarios[scenario]()
process.stdout.write(`${JSON.stringify(result)}\n`)
if (scenario !== 'inflight') process.exit(0)
