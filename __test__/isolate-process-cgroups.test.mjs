// The cgroups of sandbox processes (src/sandbox/cgroup/kept.rs): where the host can make them
// (root here), each process is in a process cap and a memory cap of its own; one an earlier
// process emptied serves the next, but only as the host made it: caps changed while it was in
// use, or memory still charged to it once emptied, and it is removed, the next process getting a
// fresh one. None outlives the runtime.
import fs from 'node:fs'
import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import native from '../lib/native.mjs'
import { loadIsolate, tools } from './helpers.mjs'
import { ownCgroups, runProcesses, templateProcesses } from './process-helpers.mjs'

const ROOT = process.getuid() === 0

/** The cgroup directories of this host's making that `pid` is in, by controller. */
function cgroupsOf(pid) {
  const prefix = `code-runtime-native-${process.pid}-`
  const dirs = {}
  for (const line of fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n')) {
    const [, controllers, where] = line.split(':')
    if (!where.split('/').pop().startsWith(prefix)) continue
    // cgroup v1: a hierarchy per controller; v2: one, whose directory holds both caps.
    if (controllers === '') Object.assign(dirs, { pids: `/sys/fs/cgroup${where}`, memory: `/sys/fs/cgroup${where}` })
    for (const controller of controllers.split(',').filter((c) => c === 'pids' || c === 'memory')) {
      dirs[controller] = `/sys/fs/cgroup/${controller}${where}`
    }
  }
  return dirs
}

const memoryFile = (dir) => (fs.existsSync(`${dir}/memory.max`) ? `${dir}/memory.max` : `${dir}/memory.limit_in_bytes`)
const caps = (dirs) => ({ pids: fs.readFileSync(`${dirs.pids}/pids.max`, 'utf8').trim(), memory: fs.readFileSync(memoryFile(dirs.memory), 'utf8').trim() })

/**
 * A runtime of one process at a time whose program calls `tools.look()`: while it waits, `during`
 * gets the serving process's cgroups (and may do to them what it will), and the run returns them.
 */
async function looking(scenario) {
  let during = () => {}
  const { namespace } = tools({
    look: async () => {
      const [serving] = runProcesses()
      const dirs = cgroupsOf(serving.pid)
      // Its own, not its template's (which holds the template and a child not yet moved out).
      const [template] = templateProcesses()
      const inTemplates = Object.entries(cgroupsOf(template.pid)).filter(([c, dir]) => dirs[c] === dir)
      expect(inTemplates).toEqual([])
      const seen = dirs.memory ? { dirs, caps: caps(dirs) } : { dirs }
      during(dirs)
      return seen
    },
  })
  const honestPool = native.IsolatePool
  // A forged pool (`scenario`: its template subverted, its processes honest), built as the suite's
  // other forged pools are (__test__/isolate-process-forged-main.test.mjs).
  if (scenario) {
    native.IsolatePool = function ForgedPool(options) {
      return native.forgeIsolatePool(scenario, options)
    }
  }
  const { runtime, fiber } = await loadIsolate({ containment: 'process', maxProcesses: 1 }).finally(() => {
    native.IsolatePool = honestPool
  })
  const look = async (then = () => {}) => {
    during = then
    const result = await runtime.run({ program: 'return await tools.look({})', bindings: [namespace] })
    expect(result.error).toBeUndefined()
    return result.value
  }
  return { runtime, fiber, look }
}

describe('the cgroups of sandbox processes', () => {
  it('one a process emptied serves the next, with the caps the host made it with', async () => {
    const { runtime, fiber, look } = await looking()
    expect(runtime.sandbox.memoryCgroup).toBe(ROOT)
    const first = await look()
    const second = await look()
    const third = await look()
    if (ROOT) {
      expect(Object.keys(first.dirs).sort()).toEqual(['memory', 'pids'])
      // One process at a time: the next takes what the last emptied.
      expect(second).toEqual(first)
      expect(third).toEqual(first)
    } else {
      expect([first, second, third]).toEqual([{ dirs: {} }, { dirs: {} }, { dirs: {} }])
    }
    await fiber.dispose()
    expect(ownCgroups()).toEqual([])
  })

  it('one whose caps changed, or that still holds memory, is removed, not reused', async () => {
    const { fiber, look } = await looking()
    const first = await look()
    if (!ROOT) {
      expect(first).toEqual({ dirs: {} })
      await fiber.dispose()
      return
    }
    // What a process that reached its cgroups could do: raise its caps for whoever comes next.
    const raised = await look((dirs) => {
      fs.writeFileSync(`${dirs.pids}/pids.max`, 'max')
      fs.writeFileSync(memoryFile(dirs.memory), String(4 * 2 ** 30))
    })
    expect(raised).toEqual(first)
    const afterRaised = await look()
    expect(afterRaised.caps).toEqual(first.caps)
    expect(afterRaised.dirs.memory).not.toBe(first.dirs.memory)
    expect(afterRaised.dirs.pids).not.toBe(first.dirs.pids)
    // Memory charged to it that its processes' exit does not free (a tmpfs file written from it).
    const shm = `/dev/shm/code-runtime-native-charge-${process.pid}`
    try {
      const charged = await look((dirs) => {
        const sh = spawnSync('sh', ['-c', `echo $$ > ${dirs.memory}/cgroup.procs && head -c 4194304 /dev/zero > ${shm}`])
        expect(sh.status).toBe(0)
      })
      expect(charged).toEqual(afterRaised)
      const afterCharged = await look()
      expect(afterCharged.caps).toEqual(first.caps)
      expect(afterCharged.dirs.memory).not.toBe(afterRaised.dirs.memory)
    } finally {
      fs.rmSync(shm, { force: true })
    }
    await fiber.dispose()
    expect(ownCgroups()).toEqual([])
  })

  it("one its template left outside them is moved there by the host before it serves a run", async () => {
    const { fiber, look } = await looking('template-unmoved')
    const first = await look()
    const second = await look()
    if (ROOT) {
      expect(Object.keys(first.dirs).sort()).toEqual(['memory', 'pids'])
      expect(second).toEqual(first)
    } else {
      expect([first, second]).toEqual([{ dirs: {} }, { dirs: {} }])
    }
    await fiber.dispose()
    expect(ownCgroups()).toEqual([])
  })
})
