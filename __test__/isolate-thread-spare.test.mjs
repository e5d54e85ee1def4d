// The thread tier's spare (docs/typescript.md#the-thread-tiers-spare): each run takes an isolate
// prepared on a thread of its own before it arrived. What a program could try through it: find
// what an earlier run left (a global, a prototype change, a pending timer), or leave a thread
// behind. Runs here are on the thread tier whatever CRN_TEST_CONTAINMENT says.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadIsolate, runThreads, threadsNamedNow } from './helpers.mjs'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

describe('an isolate prepared before its run', () => {
  let runtime
  let fiber
  beforeAll(async () => {
    ;({ runtime, fiber } = await loadIsolate({ containment: 'thread' }))
  })
  afterAll(() => fiber.dispose())

  const plant =
    "globalThis.planted = 1; Array.prototype.planted = 2; Object.prototype.toString = () => 'planted'; setTimeout(() => { globalThis.late = 3 }, 0); return 'planted'"
  const look = "return [typeof planted, typeof [].planted, Object.prototype.toString.call([]), typeof late]"
  const clean = ['undefined', 'undefined', '[object Array]', 'undefined']

  it('holds nothing of the run before it, back to back and paced', async () => {
    for (const pace of [0, 20]) {
      for (let i = 0; i < 5; i++) {
        expect((await runtime.run({ program: plant, bindings: [] })).value).toBe('planted')
        if (pace) await sleep(pace)
        expect((await runtime.run({ program: look, bindings: [] })).value).toEqual(clean)
      }
    }
  })

  it('serves one run at a time: concurrent runs each see a fresh isolate', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => runtime.run({ program: `globalThis.mine = ${i}; await null; return [mine, typeof planted]`, bindings: [] })))
    expect(results.map((r) => r.value)).toEqual(Array.from({ length: 8 }, (_, i) => [i, 'undefined']))
  })

  it("a program too long for the spare's stack runs on a thread of its own, and the spare serves the next run", async () => {
    // More than 16 384 tokens: `x+=1;` is four.
    const long = `let x = 0; ${'x+=1;'.repeat(5000)} return x`
    expect((await runtime.run({ program: long, bindings: [] })).value).toBe(5000)
    expect((await runtime.run({ program: look, bindings: [] })).value).toEqual(clean)
  })

  it("has the runtime's heap cap", async () => {
    const capped = await loadIsolate({ containment: 'thread', maxOldGenerationSizeMb: 32 })
    await sleep(50)
    expect(await capped.runtime.run({ program: 'const a = []; for (;;) a.push(new Array(1e6))', bindings: [] })).toEqual({
      logs: [],
      error: { kind: 'worker-exit', message: 'isolate heap limit reached (32 MiB)' },
    })
    expect((await capped.runtime.run({ program: 'return 1', bindings: [] })).value).toBe(1)
    await capped.fiber.dispose()
  })
})

describe('dispose', () => {
  it('joins the threads still tearing their isolates down after their results', async () => {
    const earlier = await runThreads()
    const { runtime, fiber } = await loadIsolate({ containment: 'thread' })
    // Results come before their isolates are torn down (a run's thread is joined later): dispose
    // joins any still tearing down, however long that takes. Each array buffer's backing store
    // is freed on its own at teardown, which then outlasts dispose's other work (plain objects
    // were freed with their pages before dispose got to its join, so its absence went unseen).
    const big = 'const keep = []; for (let i = 0; i < 1200000; i++) keep.push(new ArrayBuffer(64)); return keep.length'
    const results = await Promise.all(Array.from({ length: 2 }, () => runtime.run({ program: big, bindings: [] })))
    expect(results.map((r) => r.value)).toEqual([1200000, 1200000])
    await fiber.dispose()
    // Looked at as dispose resolves, before any other turn of the loop.
    expect(threadsNamedNow('code-runtime-is').filter((id) => !earlier.has(id))).toEqual([])
  })

  it("ends the spare's thread: no isolate thread of the runtime is left", async () => {
    const earlier = await runThreads()
    const { runtime, fiber } = await loadIsolate({ containment: 'thread' })
    // A spare preparing (at load) and one prepared (after a run, given time).
    expect((await runtime.run({ program: 'return 1', bindings: [] })).value).toBe(1)
    await sleep(50)
    const ours = [...(await runThreads())].filter((id) => !earlier.has(id))
    expect(ours.length).toBe(1)
    await fiber.dispose()
    expect([...(await runThreads())].filter((id) => !earlier.has(id))).toEqual([])
  })

  it('right after load, while the spare is still being prepared', async () => {
    const earlier = await runThreads()
    const { fiber } = await loadIsolate({ containment: 'thread' })
    await fiber.dispose()
    expect([...(await runThreads())].filter((id) => !earlier.has(id))).toEqual([])
  })
})
