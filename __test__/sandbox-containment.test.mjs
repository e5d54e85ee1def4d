// What the kernel keeps from a run (issue 22), with real children, as this process's user (root on
// CI) and as an unprivileged user: a host process (__test__/sandbox-host.mjs) plays each scenario.
// - Unix sockets the host listens on (in /tmp, its TMPDIR, /run, /var/tmp, and the abstract
//   namespace) are out of reach, and nobody connected to them.
// - `/` inside a run holds exactly what docs/sandbox.md#the-filesystem-a-child-sees lists.
// - A root host's runs are nobody as the host's kernel sees them; another host's runs have its uid.
// - A host SIGKILLed with two Python and two isolate runs in flight takes every child with it
//   within a second, and the next load removes the staging directories it left.
// - Filling the scratch tmpfs with directories stops at its inode cap, with the host's slab moved
//   by a bounded amount; under a root host, socket buffers, memfds and SysV segments count against
//   the run's memory cgroup, and the kernel ends a run that fills it.
// - A program that lowers its own CPU limit gets what its real CPU use earns.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { ROOT, hostEnv, passes, play, stage } from './host-passes.mjs'
import { descendants, waitFor } from './process-helpers.mjs'
import { isAlive, privateTmpdir, stagingDirs, startTime } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 120_000 })
const TMP = privateTmpdir('sandbox-containment')

/** The scratch tmpfs: 64 MiB, one inode per 4 KiB (src/sandbox/harden/root.rs). */
const SCRATCH_INODES = (64 << 20) / 4096
/** What filling the scratch with directories may add to the host's slab (about 1 KiB each). */
const SLAB_BOUND = 64 << 20

afterAll(() => fs.rmSync(TMP, { recursive: true, force: true }))

/** The first path component of every entry docs/sandbox.md lists for a Python child's root. */
function expectedRoot(out) {
  const top = (p) => p.split('/')[1]
  const system = ['/usr', '/bin', '/lib', '/lib64', '/lib32', '/libx32'].filter((p) => {
    try {
      fs.lstatSync(p)
      return true
    } catch {
      return false
    }
  })
  return [...new Set(['dev', 'etc', 'proc', ...system.map(top), top(fs.realpathSync(out.interpreter)), top(out.tmpdir)])].sort()
}

/** Cgroup directories (any controller, a few levels deep) a host process named `pid` made. */
function cgroupsOf(pid) {
  const found = []
  const walk = (dir, depth) => {
    let entries
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue
      if (e.name.startsWith(`code-runtime-native-${pid}-`)) found.push(path.join(dir, e.name))
      else if (depth > 0) walk(path.join(dir, e.name), depth - 1)
    }
  }
  walk('/sys/fs/cgroup', 4)
  return found
}

describe.each(passes())('a run reaches nothing of its host $name', (pass) => {
  it('sockets, files, ids, kernel memory and the CPU verdict', async () => {
    const where = stage(pass, TMP)
    const out = await play(pass, where, 'reach')
    // Every socket directory this user could listen in, and the abstract namespace.
    expect(out.sockets).toEqual(ROOT && pass.own ? ['/tmp', 'TMPDIR', '/run', '/var/tmp', 'abstract'] : expect.arrayContaining(['/tmp', 'TMPDIR', '/var/tmp', 'abstract']))
    expect(out.connects).toEqual(out.sockets.map((place) => (place === 'abstract' ? 'ConnectionRefusedError' : 'FileNotFoundError')))
    expect(out.accepted).toEqual(out.sockets.map(() => 0))
    // The root docs/sandbox.md documents: the system directories, the interpreter's, the staging
    // directory's, and a /dev, /etc and /proc of the run's own.
    const etc = ['group', 'ld.so.cache', ...(fs.existsSync('/etc/localtime') ? ['localtime'] : []), 'passwd'].sort()
    expect(out.listing).toEqual({
      logs: [],
      value: { '/': expectedRoot(out), '/dev': ['null', 'urandom'], '/etc': etc, uid: [1000, 1000], cwd: expect.stringMatching(/\/code-runtime-native-python-[^/]+\/tmp$/) },
    })
    // Never the host's root: the run's processes, as the host's kernel sees them.
    const uid = pass.uid === 0 ? 65534 : pass.uid
    expect(out.sandbox).toMatchObject({ namespaces: true, privateRoot: true, uid })
    expect(out.isolateSandbox).toMatchObject({ namespaces: true, privateRoot: true, uid })
    expect(out.selfUid.value.length).toBeGreaterThan(0)
    for (const uids of out.selfUid.value) expect(uids).toEqual([uid, uid, uid, uid])
    // The inode cap of the scratch stops the flood; the slab grows by a bounded amount.
    const [made, error, slabAtPeak] = out.flood.value
    expect(error).toBe('OSError')
    expect(made).toBeLessThanOrEqual(SCRATCH_INODES)
    expect(made).toBeGreaterThan(SCRATCH_INODES / 2)
    expect(slabAtPeak - out.slabBefore).toBeLessThan(SLAB_BOUND)
    // Per process: 1024 open files and 256 processes (threads included) in the run.
    expect(out.limits).toEqual({ logs: [], value: [[1024, 1024], [256, 256]] })
    // A root host caps each run's memory as a whole (addressSpaceMb + 128 MiB): sockets' buffers,
    // memfds and SysV segments count, and the kernel ends a run that reaches the cap.
    expect(out.sandbox.memoryCgroup).toBe(pass.uid === 0)
    if (pass.uid === 0) {
      const cap = (128 + 128) << 20
      for (const [kind, { result, made }] of Object.entries(out.floods)) {
        expect([kind, result]).toEqual([kind, { logs: [], error: { kind: 'worker-exit', message: `python run exceeded its memory cap of ${cap >> 20} MiB (its processes, their scratch files and the kernel memory they hold); the kernel ended it` } }])
        expect([kind, made > cap / 4, made < cap]).toEqual([kind, true, true])
      }
    }
    // Lowering its own limit earns nothing: a short run returns, a long one dies of its own
    // SIGXCPU at 1 s of the configured 10 s (a crash, not the CPU budget).
    expect(out.loweredLimitShortRun).toEqual({ logs: [], value: 'done' })
    expect(out.loweredLimitLongRun).toEqual({ logs: [], error: { kind: 'worker-exit', message: 'python exited (code=null, signal=SIGXCPU) before completing' } })
    expect(out.isolate).toEqual({ logs: [], value: 1 })
  })

  it('a host SIGKILLed mid-run takes every child with it, and the next load removes what it left', async () => {
    const where = stage(pass, TMP)
    const host = spawn(where.node, [where.script, 'inflight', JSON.stringify({ python: where.python })], {
      uid: pass.uid,
      gid: pass.gid,
      cwd: where.dir,
      env: hostEnv(where.dir),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    host.stdout.on('data', (d) => (stdout += d))
    host.stderr.on('data', (d) => (stderr += d))
    const ready = await waitFor(() => stdout.includes('"ready":true') || host.exitCode !== null, 60_000)
    if (!stdout.includes('"ready":true')) host.kill('SIGKILL')
    expect({ ready, stdout: stdout.replace(/,"ownRoot":(true|false)/, ''), stderr }).toEqual({ ready: true, stdout: '{"ready":true}\n', stderr: '' })
    const { ownRoot } = JSON.parse(stdout)
    const children = descendants(host.pid).map((p) => p.pid)
    // Keepers, inits, interpreters, their `sleep`s and the isolate processes.
    expect(children.length).toBeGreaterThanOrEqual(10)
    // Runs forked into a root of their own make no directory on the host's disk (their scratch is
    // a name in that root); runs without one do.
    const mine = () => stagingDirs(where.dir).filter((n) => n.startsWith(`code-runtime-native-python-${host.pid}-`))
    if (ownRoot) expect(mine()).toEqual([])
    else expect(mine().length).toBeGreaterThanOrEqual(2)
    // What a run the host spawned (a durable attempt's, or one without the template) leaves when
    // the host dies: its directory, named after the host's pid and start time, with a file in it.
    const spawnedRun = path.join(where.dir, `code-runtime-native-python-${host.pid}-${startTime(host.pid)}-Spawnd`)
    fs.mkdirSync(path.join(spawnedRun, 'tmp'), { recursive: true })
    fs.writeFileSync(path.join(spawnedRun, 'bootstrap.py'), '')
    for (const made of [spawnedRun, path.join(spawnedRun, 'tmp'), path.join(spawnedRun, 'bootstrap.py')]) {
      fs.chownSync(made, pass.uid, pass.gid)
    }
    host.kill('SIGKILL')
    await new Promise((r) => host.on('close', r))
    // Gone within a second (the bound): the helpers read their lifeline's end at once.
    await waitFor(() => children.filter(isAlive).length === 0, 1000)
    expect(children.filter(isAlive)).toEqual([])
    // The dead host's staging directories are still there until the next start of the addon.
    const dead = mine()
    expect(dead).toContain(path.basename(spawnedRun))
    if (ownRoot) expect(dead).toEqual([path.basename(spawnedRun)])
    else expect(dead.length).toBeGreaterThanOrEqual(3)
    // A root host made cgroups for its runs; they outlive it until the next start too.
    if (pass.uid === 0) expect(cgroupsOf(host.pid).length).toBeGreaterThan(0)
    const next = await play(pass, where, 'load')
    expect(next).toEqual({ python: { logs: [], value: 1 }, isolate: { logs: [], value: 1 } })
    expect(stagingDirs(where.dir)).toEqual([])
    expect(cgroupsOf(host.pid)).toEqual([])
  })
})
