// A Python run under the `ctx.ptcRuntime` seam's file policy (issue 18), enforced by the kernel:
// per mode, from inside a real run, what it may read and write (the workspace, its scratch),
// what stays out of reach (another workspace, a private home), and the network; files a run
// writes in the workspace belong to the host; a refusal the program lets through is `denied`.
// As this process's user (root on CI: the run is nobody and reaches the workspace through an
// idmapped mount) and as an unprivileged user.
import fs from 'node:fs'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { passes, play, stage } from './host-passes.mjs'
import { privateTmpdir } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 120_000 })
const TMP = privateTmpdir('ptc-file-policy')
afterAll(() => fs.rmSync(TMP, { recursive: true, force: true }))

// Landlock refuses the connect before the empty network namespace could.
const REFUSED_NET = 'PermissionError EACCES'
/** What each mode allows, as the probe reports it (docs/seam.md#python-and-file-policies). */
const EXPECTED = {
  'read-only': { 'read workspace': 'ok', 'write workspace': 'OSError EROFS', 'tcp to the host': REFUSED_NET },
  'workspace-write': { 'read workspace': 'ok', 'write workspace': 'ok', 'tcp to the host': REFUSED_NET },
  'danger-full-access': { 'read workspace': 'ok', 'write workspace': 'ok', 'tcp to the host': 'ok' },
}

describe.each(passes())('a Python run under each file policy $name', (pass) => {
  it('reads and writes what its mode allows, reaches nothing else, and writes as the host', async () => {
    const out = await play(pass, stage(pass, TMP), 'policy')
    expect(out.sandboxMode).toBe('read-only')
    for (const [mode, allowed] of Object.entries(EXPECTED)) {
      const run = out.runs[mode]
      expect([mode, run.sandbox]).toEqual([mode, mode === 'danger-full-access' ? { mode, denied: false } : { mode, denied: false, enforcement: 'full' }])
      expect([mode, run.value]).toEqual([
        mode,
        {
          cwd: `${out.workspace}/sub`,
          ...allowed,
          'write scratch': 'ok',
          // Not in the run's root at all, whatever the mode: the policy grants the workspace only.
          'read another workspace': 'FileNotFoundError ENOENT',
          'read a private home': 'FileNotFoundError ENOENT',
        },
      ])
      // What a run writes in the workspace is the host's own file (never its run's uid).
      expect([mode, out.owners[mode]]).toEqual([mode, allowed['write workspace'] === 'ok' ? out.hostUid : null])
    }
    expect(out.denied.error.kind).toBe('exception')
    expect(out.denied.error.message).toMatch(/OSError: \[Errno 30\] Read-only file system/)
    expect(out.denied.sandbox).toEqual({ mode: 'read-only', denied: true, enforcement: 'full' })
  })

  // docs/seam.md#file-locks: a lock is on the file itself, so one a read-only run took through
  // its read-only descriptor would hold off the host's own processes.
  it('read-only takes no lock on a workspace file, so the host gets every lock; workspace-write may hold one', async () => {
    const out = await play(pass, stage(pass, TMP), 'locks')
    const readOnly = out['read-only']
    expect(readOnly.sandbox).toEqual({ mode: 'read-only', denied: false, enforcement: 'full' })
    expect(readOnly.value).toEqual({
      flock: 'PermissionError EPERM',
      lockf: 'PermissionError EPERM',
      'lockf, waiting': 'PermissionError EPERM',
      ofd: 'PermissionError EPERM',
      lease: 'PermissionError EPERM',
      // Testing for a lock changes nothing.
      'test for a lock': 'ok',
      // SQLite's own locking meets the refusal; a database opened immutable takes no lock.
      sqlite: readOnly.value.sqlite,
      'sqlite, immutable': 7,
      host: { flock: 'ok', lockf: 'ok', ofd: 'ok' },
    })
    expect(readOnly.value.sqlite).toMatch(/^OperationalError: /)
    // The same program, allowed to affect the workspace: its locks hold and the host waits.
    const write = out['workspace-write']
    expect(write.sandbox).toEqual({ mode: 'workspace-write', denied: false, enforcement: 'full' })
    expect(write.value).toEqual({
      flock: 'ok',
      lockf: 'ok',
      'lockf, waiting': 'ok',
      ofd: 'ok',
      'test for a lock': 'ok',
      sqlite: 7,
      'sqlite, immutable': 7,
      host: { flock: 'EAGAIN', lockf: 'EAGAIN', ofd: 'EAGAIN' },
    })
  })
})

// Issue 26: a link planted by an earlier run never widens a later run's view, whether it is
// there at resolve() (a TypeError naming the field) or swapped in before run() (the sandbox
// helper opens every policy path with no link followed and mounts what it opened: the run is
// `sandbox-unavailable`, nothing ran, no `enforcement`).
describe.each(passes())('a link an earlier run planted $name', (pass) => {
  it('is refused at resolve() and at run(), and the host file is never read', async () => {
    const out = await play(pass, stage(pass, TMP), 'planted')
    const { w1, w2, w3, hostDir } = out.paths
    const P = 'code-runtime-native: '
    expect(out.plant.value).toBe(true)
    const link = (field, p) =>
      `${P}${field} must be the absolute path of an existing directory with no symbolic link in it: ${JSON.stringify(p)} passes through a symbolic link`
    expect(out.cwdLink.threw).toBe('TypeError')
    expect(out.cwdLink.message).toContain(link('request.cwd', `${w1}/src`))
    expect(out.rootLink.threw).toBe('TypeError')
    expect(out.rootLink.message).toContain(link('request.sandboxPolicy.workspaceRoot', `${w1}/src`))
    expect(out.slashLink.message).toContain(link('request.sandboxPolicy.workspaceRoot', `${w1}/slash`))
    for (const [name, p] of [['cwdSwapped', `${w1}/later`], ['rootSwapped', w3]]) {
      const run = out[name]
      expect([name, run.value, run.sandbox]).toEqual([name, undefined, { mode: 'read-only', denied: false }])
      expect([name, run.error.kind]).toEqual([name, 'sandbox-unavailable'])
      expect(run.error.message).toContain(`the sandbox policy's path ${JSON.stringify(p)} is no longer what resolve() checked: a symbolic link is on its way now`)
      expect(run.error.message).not.toContain('host secret')
    }
    // Inside W1 the link leads into the run's own root, which holds no host directory.
    expect(out.insideW1.error.message).toMatch(/FileNotFoundError/)
    // Under a spare booted for the same policy: the path's new directory is what the run reads
    // (the spare, which holds the old one, does not serve it), and a link there refuses the run.
    const { first, spareBefore, replaced, spareBetween, linked } = out.underSpare
    expect([first.value, spareBefore, replaced.value, spareBetween]).toEqual(['first', true, 'second', true])
    expect(linked.value).toBeUndefined()
    expect(linked.error.kind).toBe('sandbox-unavailable')
    expect(linked.error.message).toContain(`the sandbox policy's path ${JSON.stringify(out.paths.w4)} is no longer what resolve() checked: a symbolic link is on its way now`)
    expect(JSON.stringify(out)).not.toContain('host secret')
    expect(hostDir).not.toBe(w2)
  })
})

