// The failure kinds `ctx.ptcRuntime` adds, each from a real cause, and what `ctx.codeRuntime`
// keeps: a Python child that breaks the channel protocol (a frame past the fd-3 cap, a reply
// queue it stopped reading) ends `protocol` on the current seam and `worker-exit`, with the same
// message, on the old one; the same native marker ends a subverted sandbox process's run
// (isolate-process-forged.test.mjs). A binding that never settles is not the child's breach: it
// stays `worker-exit` on both. `sandbox-unavailable` is in ptc-run.test.mjs; the file plan a
// policy gives a Python run is checked here.
import fs from 'node:fs'
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { PythonCodeRuntime, PythonPtcRuntime } from 'code-runtime-native'
import { filePlan } from 'code-runtime-native/ptc'
import { PYTHON, TOOLS, liveProcesses, privateTmpdir, unreapedChildren } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 })
const TMP = privateTmpdir('ptc-failures')

const seams = {}
beforeAll(async () => {
  for (const [name, Class] of [['code', PythonCodeRuntime], ['ptc', PythonPtcRuntime]]) {
    const ctx = new Context()
    const fiber = await ctx.plugin(Class, { pythonBin: PYTHON, graceMs: 300 })
    const runtime = name === 'code' ? ctx.codeRuntime : ctx.ptcRuntime
    const run = name === 'code'
      ? (request) => runtime.run(request)
      : (request) => runtime.run(runtime.resolve(request))
    seams[name] = { fiber, run }
  }
})
afterAll(async () => {
  for (const { fiber } of Object.values(seams)) await fiber.dispose()
  expect(liveProcesses(TMP)).toEqual([])
  expect(unreapedChildren()).toEqual([])
  fs.rmSync(TMP, { recursive: true, force: true })
})

/** Runs `request` on both seams: `[old seam's result, current seam's result]`. */
const both = (request) => Promise.all([seams.code.run(request), seams.ptc.run(request)])

describe('protocol: a Python child that breaks the channel protocol', () => {
  it('an fd-3 frame past the cap', async () => {
    const program = 'import os\nchunk = b"x" * (1 << 20)\nfor _ in range(70):\n    os.write(3, chunk)\nimport time\ntime.sleep(10)'
    const message = 'protocol frame exceeded 67108864 bytes on fd 3'
    expect(await both({ program, bindings: [] })).toStrictEqual([
      { logs: [], error: { kind: 'worker-exit', message } },
      { logs: [], error: { kind: 'protocol', message } },
    ])
  })

  it('a reply queue the child stopped reading', async () => {
    const functions = { blob: async () => 'r'.repeat(4096) }
    const program = `
import asyncio
asyncio.get_running_loop().remove_reader(3)
for i in range(1300):
    asyncio.ensure_future(tools.blob(i))
    if i % 50 == 49:
        await asyncio.sleep(0.02)
await asyncio.sleep(10)`
    const message = 'reply queue exceeded 1024 pending frames on fd 3 (the child stopped consuming its replies)'
    expect(await both({ program, bindings: [TOOLS(functions)] })).toStrictEqual([
      { logs: [], error: { kind: 'worker-exit', message } },
      { logs: [], error: { kind: 'protocol', message } },
    ])
  })

  it('with a policy, the facts come with the protocol failure', async () => {
    const program = 'import os\nos.write(3, b\'{"type":"log","text":"\' + b"y" * (64 << 20) + b\'"}\\n\')\nreturn 1'
    expect(
      await seams.ptc.run({ program, bindings: [], sandboxPolicy: { mode: 'danger-full-access', workspaceRoot: TMP } }),
    ).toStrictEqual({
      logs: [],
      error: { kind: 'protocol', message: 'protocol frame exceeded 67108864 bytes on fd 3' },
      sandbox: { mode: 'danger-full-access', denied: false },
    })
  })

  it('bindings that never settle fill the pending-calls cap: protocol on the ptc seam, as the host\'s backend', async () => {
    const never = { never: () => new Promise(() => {}) }
    const program = 'import asyncio\nfor i in range(129):\n    asyncio.ensure_future(tools.never(i))\nawait asyncio.sleep(10)'
    const message = 'more than 128 binding calls were pending at once (maxPendingCalls): await calls before making more'
    expect(await both({ program, bindings: [TOOLS(never)] })).toStrictEqual([
      { logs: [], error: { kind: 'worker-exit', message } },
      { logs: [], error: { kind: 'protocol', message } },
    ])
  })
})

describe('not the child: the same kind on both seams', () => {
  it('a child that exits: worker-exit', async () => {
    const error = { kind: 'worker-exit', message: 'python exited (code=3, signal=null) before completing' }
    expect(await both({ program: 'import os\nos._exit(3)', bindings: [] })).toStrictEqual([
      { logs: [], error },
      { logs: [], error },
    ])
  })
})

describe('the file plan a policy gives a Python run (passed as filePolicy, for the native file policy)', () => {
  it('read-only: the workspace readable, writes only to the sinks', () => {
    // The working directory is named whatever it is: the sandbox helper decides on the opened
    // objects whether it lies inside the workspace (then it adds nothing), never on these strings.
    expect(filePlan({ mode: 'read-only', workspaceRoot: '/w' }, '/w/sub')).toStrictEqual({
      cwd: '/w/sub',
      readOnly: ['/w', '/w/sub'],
      readWrite: ['/dev/null'],
      network: false,
      locks: false,
    })
  })

  it('workspace-write: the workspace writable', () => {
    expect(filePlan({ mode: 'workspace-write', workspaceRoot: '/w' }, '/w')).toStrictEqual({
      cwd: '/w',
      readOnly: [],
      readWrite: ['/w', '/dev/null'],
      network: false,
      locks: true,
    })
  })

  it('a cwd outside the workspace is readable (but / itself, which would be the whole tree)', () => {
    expect(filePlan({ mode: 'read-only', workspaceRoot: '/w' }, '/').readOnly).toEqual(['/w'])
    expect(filePlan({ mode: 'read-only', workspaceRoot: '/w' }, '/w2')).toStrictEqual({
      cwd: '/w2',
      readOnly: ['/w', '/w2'],
      readWrite: ['/dev/null'],
      network: false,
      locks: false,
    })
    expect(filePlan({ mode: 'workspace-write', workspaceRoot: '/w' }, '/elsewhere')).toStrictEqual({
      cwd: '/elsewhere',
      readOnly: ['/elsewhere'],
      readWrite: ['/w', '/dev/null'],
      network: false,
      locks: true,
    })
  })

  it("danger-full-access: file rules lifted, network on, the workspace still named (the host's own files)", () => {
    expect(filePlan({ mode: 'danger-full-access', workspaceRoot: '/w' }, '/tmp')).toStrictEqual({
      cwd: '/tmp',
      readOnly: ['/tmp'],
      readWrite: ['/', '/w'],
      network: true,
      locks: true,
    })
    expect(filePlan({ mode: 'danger-full-access', workspaceRoot: '/w' }, '/w/sub')).toStrictEqual({
      cwd: '/w/sub',
      readOnly: ['/w/sub'],
      readWrite: ['/', '/w'],
      network: true,
      locks: true,
    })
  })
})
