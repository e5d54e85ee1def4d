// A program that escaped V8 inside a sandbox process (issue 9): the probe mode of the sandbox
// helper hardens itself exactly as a serving process does and then makes, natively, the system
// calls such a program would make against this host — read its /proc environ and memory, signal
// it, trace it, read /etc/passwd, create a file, open sockets, exec a shell, fork, unshare, lock what
// it holds. Each
// must fail. Once with the seccomp allowlist (what runs get), once without it (what the layers
// beneath hold on their own). Both as this process's user (root on CI) and as an unprivileged
// user in a host process of its own, since users' machines vary and the layers differ for root.
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import native from '../lib/native.mjs'
import { loadIsolate } from './helpers.mjs'
import { runAs, sandboxProcesses, unprivilegedPackage } from './process-helpers.mjs'

vi.setConfig({ testTimeout: 60_000 })
const REPO = fileURLToPath(new URL('..', import.meta.url))
const EPERM = 1
const ENOENT = 2
const ESRCH = 3
const EACCES = 13
const EROFS = 30

/** What a probe must show, with or without the allowlist. */
function expectContained({ withAllowlist, without }) {
  expect(withAllowlist.allowlist).toBe(true)
  // Under the allowlist nothing outside a V8 process's needs is even attempted by the kernel.
  for (const [name, errno] of withAllowlist.results) expect([name, errno]).toEqual([name, EPERM])
  const beneath = Object.fromEntries(without.results)
  expect(without.allowlist).toBe(false)
  // The run's own PID namespace and a fresh /proc: the host is not there to read or signal.
  expect(beneath['open host environ']).toBe(ENOENT)
  expect(beneath['open host mem']).toBe(ENOENT)
  expect(beneath['signal the host']).toBe(ESRCH)
  expect(beneath['signal everyone']).toBe(ESRCH)
  // A root of its own: read-only, and none of the host's tree (its /tmp socket is not there).
  expect(beneath['create a file']).toBe(EROFS)
  expect(beneath['connect a host Unix socket']).toBe(ENOENT)
  // Landlock: no file access once V8 is loaded, no exec (both files exist in the root).
  expect(beneath['open /etc/passwd']).toBe(EACCES)
  expect(beneath['exec a shell']).toBe(EACCES)
  // The deny-list under it.
  expect(beneath['ptrace the host']).toBe(EPERM)
  expect(beneath['read host memory']).toBe(EPERM)
  expect(beneath.unshare).toBe(EPERM)
  // Locks on each descriptor it holds (a lock is on the inode: docs/seam.md#file-locks), refused by
  // the deny-list too.
  const locks = without.results.filter(([name]) => /^(flock|record-lock) /.test(name))
  expect(locks.map(([name]) => name)).toEqual(
    ['fd 0', 'fd 1', 'fd 2', 'the channel'].flatMap((fd) => [`flock ${fd}`, `record-lock ${fd}`]),
  )
  for (const [name, errno] of locks) expect([name, errno]).toEqual([name, EPERM])
}

const HOST_SCRIPT = `
  import fs from 'node:fs'
  import net from 'node:net'
  import { Context } from 'cordis'
  import native from './lib/native.mjs'
  import { IsolateCodeRuntime } from './lib/index.mjs'
  const socket = '/tmp/code-runtime-native-probe-' + process.pid + '.sock'
  fs.rmSync(socket, { force: true })
  const server = net.createServer((s) => s.end())
  await new Promise((resolve) => server.listen(socket, resolve))
  const ctx = new Context()
  await ctx.plugin(IsolateCodeRuntime, { containment: 'process' })
  const runtime = ctx.codeRuntime
  const out = {
    hostUid: process.getuid(),
    sandbox: runtime.sandbox,
    withAllowlist: JSON.parse(native.probeContainedIsolate(true)),
    without: JSON.parse(native.probeContainedIsolate(false)),
    fatal: await runtime.run({ program: "console.log('before'); 'x'.repeat(2**27 + 1000).split('')", bindings: [] }),
    next: await runtime.run({ program: 'return 1', bindings: [] }),
  }
  await ctx.registry.get(IsolateCodeRuntime)?.dispose?.()
  server.close()
  process.stdout.write(JSON.stringify(out))
  process.exit(0)
`

function expectRuns(out) {
  expect(out.sandbox).toEqual({
    process: true,
    helper: true,
    namespaces: true,
    landlock: out.sandbox.landlock,
    seccomp: true,
    seccompAllowlist: true,
    processCap: true,
    // Root here has a memory cgroup to divide; an unprivileged user has none delegated.
    memoryCgroup: out.sandbox.memoryCgroup,
    privateRoot: true,
    // Never the host's root: a root host's processes are nobody, another host's its own uid.
    uid: out.hostUid === 0 ? 65534 : out.hostUid,
  })
  expect(typeof out.sandbox.memoryCgroup).toBe('boolean')
  expect(out.sandbox.landlock).toBeGreaterThanOrEqual(6)
  expect(out.fatal.logs).toEqual(['before'])
  expect(out.fatal.error.kind).toBe('worker-exit')
  expect(out.fatal.error.message).toMatch(/^isolate process exited \(code=null, signal=SIGTRAP\) before completing/)
  expect(out.next).toEqual({ logs: [], value: 1 })
}

describe('a program that escaped V8 cannot reach the host from its sandbox process', () => {
  it(`as this process's user (uid ${process.getuid()})`, async () => {
    // A Unix socket the host listens on in /tmp, where the probe tries to connect.
    const socket = `/tmp/code-runtime-native-probe-${process.pid}.sock`
    fs.rmSync(socket, { force: true })
    const server = net.createServer((s) => s.end())
    await new Promise((resolve) => server.listen(socket, resolve))
    const { runtime, fiber } = await loadIsolate({ containment: 'process' })
    const out = {
      hostUid: process.getuid(),
      sandbox: runtime.sandbox,
      withAllowlist: JSON.parse(native.probeContainedIsolate(true)),
      without: JSON.parse(native.probeContainedIsolate(false)),
      fatal: await runtime.run({ program: "console.log('before'); 'x'.repeat(2**27 + 1000).split('')", bindings: [] }),
      next: await runtime.run({ program: 'return 1', bindings: [] }),
    }
    await fiber.dispose()
    server.close()
    expectContained(out)
    expectRuns(out)
    // As root the host can make a memory cgroup for each process (CI runs as root).
    if (process.getuid() === 0) expect(out.sandbox.memoryCgroup).toBe(true)
    expect(sandboxProcesses()).toEqual([])
  })

  it('as an unprivileged user, in a host process of its own', async () => {
    const uid = process.getuid() === 0 ? 65534 : process.getuid()
    const gid = process.getuid() === 0 ? 65534 : process.getgid()
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'crn-escape-'))
    try {
      fs.chmodSync(base, 0o755)
      const { pkg, node } = unprivilegedPackage(REPO, base)
      const script = path.join(pkg, 'host.mjs')
      fs.writeFileSync(script, HOST_SCRIPT)
      fs.chmodSync(script, 0o644)
      const { code, stdout, stderr } = await runAs(node, script, { uid, gid, cwd: '/', env: { PATH: '/usr/bin:/bin' } })
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
      const out = JSON.parse(stdout)
      expectContained(out)
      expectRuns(out)
    } finally {
      fs.rmSync(base, { recursive: true, force: true })
    }
  })
})
