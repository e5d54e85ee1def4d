// The attacks of __test__/python-sandbox.test.mjs as a plain module (no test framework), so a host
// process of another user can import and run them too.
import path from 'node:path'

/** The attacks: a program each, and what the host must see. `hostPid` and `port` are filled in. */
export const ATTACKS = {
  signalsToParentAndHost: ({ hostPid }) => `
import os, signal
out = []
# getppid() is 0 where the parent (the run's keeper) stands outside the run's PID namespace, and
# kill(0) would signal the program's own group: nothing to name there.
for target in [t for t in (os.getppid(), 1, ${hostPid}) if t > 0]:
    for sig in (signal.SIGKILL, signal.SIGSTOP):
        try:
            os.kill(target, sig)
            out.append("sent")
        except (PermissionError, ProcessLookupError) as e:
            out.append(type(e).__name__)
return sorted(set(out))`,
  hostProc: ({ hostPid }) => `
out = []
for p in ("/proc/%d/environ" % ${hostPid}, "/proc/%d/mem" % ${hostPid}, "/proc/%d/maps" % ${hostPid}, "/proc/1/environ", "/proc/1/mem"):
    try:
        with open(p, "rb") as f:
            f.read(1)
        out.append("read " + p)
    except OSError as e:
        out.append(type(e).__name__)
return out`,
  hostFiles: ({ repo }) => `
import os
out = []
for p in (${JSON.stringify(path.join(repo, 'py', 'bootstrap.py'))}, ${JSON.stringify(path.join(repo, 'package.json'))}, "/etc/passwd"):
    try:
        text = open(p, "rb").read()
        # The run's own root has an /etc/passwd naming only the run's user: the host's names root.
        out.append("read" if p != "/etc/passwd" or b"root:" in text else "own " + p)
    except OSError as e:
        out.append(type(e).__name__)
    try:
        open(p, "ab").write(b"#")
        out.append("wrote")
    except OSError as e:
        out.append(type(e).__name__)
return out`,
  tamperWithTheSpare: () => `
import glob, os, sys
out = []
home = os.path.dirname(sys.modules["__main__"].__file__)
parent = os.path.dirname(home)
try:
    # In a root of its own the directory shows only this run's staging directory.
    others = [n for n in os.listdir(parent) if n != os.path.basename(home)]
    out.append("listed " + " ".join(others) if others else "listed only its own")
except OSError as e:
    out.append(type(e).__name__)
for path in glob.glob(os.path.join(parent, "code-runtime-native-python-*", "bootstrap.py")) + [os.path.join(parent, "x")]:
    try:
        open(path, "a").write("raise SystemExit(9)")
        out.append("wrote")
    except OSError as e:
        out.append(type(e).__name__)
return out`,
  leaveAFile: () => `
import os, tempfile
path = os.path.join(tempfile.gettempdir(), "left-behind")
open(path, "w").write("secret")
return [tempfile.gettempdir(), path]`,
  fillTheDisk: () => `
import os, tempfile
path = os.path.join(tempfile.gettempdir(), "big")
chunk = b"x" * (1 << 20)
written = 0
try:
    with open(path, "wb") as f:
        for _ in range(256):
            f.write(chunk)
            f.flush()
            written += 1
except OSError as e:
    return [type(e).__name__, written < 100]
return ["no limit", written]`,
  network: ({ port }) => `
import socket
try:
    socket.create_connection(("127.0.0.1", ${port}), timeout=2)
    return "connected"
except OSError as e:
    return type(e).__name__`,
  kernelSurface: () => `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
out = []
# ptrace(PTRACE_TRACEME), unshare(CLONE_NEWUSER), process_vm_readv of init, mount
for name, call in (
    ("ptrace", lambda: libc.ptrace(0, 0, None, None)),
    ("unshare", lambda: libc.unshare(0x10000000)),
    ("process_vm_readv", lambda: libc.process_vm_readv(1, None, 0, None, 0, 0)),
    ("mount", lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)),
):
    r = call()
    out.append([name, r, ctypes.get_errno() if r != 0 else 0])
return out`,
  fakedCpuVerdict: () => `
import resource, signal, time
signal.signal(signal.SIGXCPU, lambda *a: None)
resource.getrusage = lambda *a: (0.0, 0.0)
resource.getrlimit = lambda *a: (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
t = time.process_time()
while time.process_time() - t < 1.4:
    pass
return "faked"`,
  replacedSignalModule: () => `
import signal, time
signal.signal = lambda *a: None
t = time.process_time()
while time.process_time() - t < 3:
    pass
return "unreachable"`,
}

/** The CPU budget's end, with where it stopped the program (docs/tracing.md#the-timeouts-clause). */
export const cpuTimeout = (where) => ({
  kind: 'timeout',
  message: `CPU time exhausted (limit at most the configured 1s; a stricter inherited RLIMIT_CPU can fire sooner)${where}`,
})

/** Runs every attack with `runtime`; returns `{ name: result }` plus the layer report. */
export async function attack(runtime, hostPid, port, repo, forkRuntime = runtime) {
  const results = { sandbox: runtime.sandbox }
  for (const [name, program] of Object.entries(ATTACKS)) {
    results[name] = await runtime.run({ program: program({ hostPid, port, repo }), bindings: [] })
  }
  // The next run sees nothing of the previous one's files.
  const [, left] = results.leaveAFile.value
  results.nextRun = await runtime.run({
    program: `import os, tempfile\nreturn [os.path.exists(${JSON.stringify(left)}), tempfile.gettempdir() != ${JSON.stringify(path.dirname(left))}]`,
    bindings: [],
  })
  // A sibling run: B sleeps; A tries to signal every pid it could name; B still completes.
  const sibling = runtime.run({ program: 'import time\ntime.sleep(1.5)\nreturn "B intact"', bindings: [] })
  results.killSiblings = await runtime.run({
    program: 'import os, signal\nhit = 0\nfor pid in range(2, 4096):\n    if pid != os.getpid():\n        try:\n            os.kill(pid, signal.SIGKILL)\n            hit += 1\n        except OSError:\n            pass\nreturn [sorted(int(p) for p in os.listdir("/proc") if p.isdigit()), hit]',
    bindings: [],
  })
  results.sibling = await sibling
  // A fork storm meets the run's process cap (a cgroup's pids.max, or RLIMIT_NPROC in its own user
  // namespace) well short of 2000 processes. On a runtime whose CPU budget the ~250 forks fit in
  // (0.6-1.1 s of CPU here, so a 1 s budget sometimes ended the run first).
  results.forkStorm = await forkRuntime.run({
    program: 'import os, time\nn = 0\ntry:\n    while n < 2000:\n        if os.fork() == 0:\n            time.sleep(30)\n            os._exit(0)\n        n += 1\nexcept BlockingIOError:\n    pass\nreturn n',
    bindings: [],
  })
  return results
}

