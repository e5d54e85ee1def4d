// PythonCodeRuntime against programs that reach for the host, for other runs, or for the next run
// (issue 10): signals to the parent, /proc of the host, the package files, a sibling run, files
// left in TMPDIR, the disk, the network, and a CPU verdict the program tries to fake. Every attack
// runs twice: as this process's user (root on CI) and as an unprivileged user in a child Node
// process, since users' hosts vary and the kernel layers behave differently for root.
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { PythonCodeRuntime } from '../lib/index.mjs'
import { attack, cpuTimeout } from './python-attacks.mjs'
import { runAs, unprivilegedPackage } from './process-helpers.mjs'
import { PYTHON, REPO, liveProcesses, load, privateTmpdir, stagingDirs, unreapedChildren } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 })
const TMP = privateTmpdir('py-sandbox')

/** What both passes must see. */
function expectContained(results) {
  expect(results.sandbox).toEqual({
    process: true,
    helper: true,
    namespaces: true,
    landlock: results.sandbox.landlock,
    seccomp: true,
    processCap: true,
    privateRoot: true,
    uid: results.sandbox.uid,
    memoryCgroup: results.sandbox.memoryCgroup,
  })
  // Never the host's root: a root host's children are nobody, any other host's its own uid.
  expect(results.sandbox.uid).not.toBe(0)
  expect(results.sandbox.landlock).toBeGreaterThanOrEqual(6)
  expect(results.signalsToParentAndHost).toEqual({ logs: [], value: expect.any(Array) })
  expect(results.signalsToParentAndHost.value).not.toContain('sent')
  expect(results.hostProc.value.filter((o) => o.startsWith('read'))).toEqual([])
  expect(results.hostFiles.value.filter((o) => o === 'read' || o === 'wrote')).toEqual([])
  // The spare child booting for the next run lives in a sibling directory: out of reach.
  expect(results.tamperWithTheSpare.value.filter((o) => (o.startsWith('listed') && o !== 'listed only its own') || o === 'wrote')).toEqual([])
  expect(results.leaveAFile.value[0]).toMatch(/\/code-runtime-native-python-\d+-\d+-\w{6}\/tmp$/)
  expect(results.nextRun).toEqual({ logs: [], value: [false, true] })
  expect(results.fillTheDisk.value).toEqual([expect.stringMatching(/^OSError$|Error$/), true])
  expect(results.network.value).not.toBe('connected')
  for (const [name, r, errno] of results.kernelSurface.value) expect([name, r, errno]).toEqual([name, -1, 1])
  // Each stopped in its loop's condition: faking the verdict or replacing `signal` moves nothing.
  expect(results.fakedCpuVerdict).toEqual({ logs: [], error: cpuTimeout(' at <model>:7:7') })
  expect(results.replacedSignalModule).toEqual({ logs: [], error: cpuTimeout(' at <model>:5:7') })
  // Only its own namespace is visible: its init (1) and itself; nothing else could be signalled.
  expect(results.killSiblings.value).toEqual([[1, 2], 0])
  expect(results.sibling).toEqual({ logs: [], value: 'B intact' })
  // The whole result first, so a failure shows how the run ended.
  expect(results.forkStorm).toEqual({ logs: [], value: expect.any(Number) })
  expect(results.forkStorm.value).toBeLessThan(300)
}

let server
let port
beforeAll(async () => {
  server = net.createServer((s) => s.end())
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  port = server.address().port
})

afterAll(() => {
  server.close()
  expect(liveProcesses(TMP)).toEqual([])
  expect(unreapedChildren()).toEqual([])
  expect(stagingDirs(TMP)).toEqual([])
  fs.rmSync(TMP, { recursive: true, force: true })
})

describe('a Python program cannot reach the host, other runs or the next run', () => {
  it(`as this process's user (uid ${process.getuid()})`, async () => {
    const { runtime, fiber } = await load(PythonCodeRuntime, { cpuSeconds: 1, graceMs: 300 })
    const forks = await load(PythonCodeRuntime, { cpuSeconds: 10, graceMs: 300 })
    const results = await attack(runtime, process.pid, port, REPO, forks.runtime)
    await fiber.dispose()
    await forks.fiber.dispose()
    expectContained(results)
  })

  it('as an unprivileged user, in a host process of its own', async () => {
    // Root drops to nobody for this pass; a non-root suite runs it as itself. The interpreter must
    // be one that user can read: the system's python3 when the suite's own lives under /root.
    const uid = process.getuid() === 0 ? 65534 : process.getuid()
    const gid = process.getuid() === 0 ? 65534 : process.getgid()
    const python = uid === process.getuid() ? PYTHON : '/usr/bin/python3'
    const dir = fs.mkdtempSync(path.join(TMP, 'unprivileged-'))
    fs.chownSync(dir, uid, gid)
    fs.chmodSync(TMP, 0o711) // that user passes through this file's private directory to its own
    // That user may not be able to read this checkout (CI clones anywhere): the package as a
    // user installs it — its JavaScript, the addon, the helper and the runtime dependencies — is
    // copied where it can.
    const { pkg, node } = unprivilegedPackage(REPO, dir, ['py', '__test__/python-attacks.mjs'])
    const script = path.join(pkg, 'host.mjs')
    const source = `
      import { Context } from 'cordis'
      import { PythonCodeRuntime } from './lib/index.mjs'
      import { attack } from './__test__/python-attacks.mjs'
      const ctx = new Context()
      await ctx.plugin(PythonCodeRuntime, { pythonBin: ${JSON.stringify(python)}, cpuSeconds: 1, graceMs: 300 })
      const forks = new Context()
      await forks.plugin(PythonCodeRuntime, { pythonBin: ${JSON.stringify(python)}, cpuSeconds: 10, graceMs: 300 })
      const results = await attack(ctx.codeRuntime, process.pid, ${port}, ${JSON.stringify(pkg)}, forks.codeRuntime)
      process.stdout.write(JSON.stringify(results))
      process.exit(0)
    `
    fs.writeFileSync(script, source)
    const { code, stdout, stderr } = await runAs(node, script, { uid, gid, cwd: dir, env: { PATH: '/usr/bin:/bin', TMPDIR: dir } })
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    const results = JSON.parse(stdout)
    expectContained(results)
    expect(liveProcesses(dir)).toEqual([])
  })
})
