// Console parity inside the real isolate: every corpus case runs as a program in a fresh V8
// isolate, and the same program text runs in this Node process (a vm context, or Node's own realm
// where the corpus says so) with Node's util.formatWithOptions / Console as the oracle. Every log
// entry must match byte for byte.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import native from '../lib/native.mjs'
import {
  CORPUS,
  expectedFor,
  knownDifferenceFor,
  MUTATIONS,
  NEWEST_LTS_MAJOR,
  PROBE_OUTPUT,
  PROBES,
  UNKNOWN_MAJORS,
} from './console-corpus.mjs'
import { loadIsolate } from './helpers.mjs'

// The isolate follows this Node's major (lib/isolate-runtime.mjs passes it to every run).
const HOST_MAJOR = Number(process.versions.node.split('.')[0])

// Cases that need the corpus's fake clock (console.time*) are covered by the two-world suite;
// documented differences (for this major) assert our own output there.
const cases = CORPUS.filter(
  (c) => !knownDifferenceFor(c, HOST_MAJOR) && !(c.kind === 'console' && /advance\(|time/.test(c.src)),
)

/**
 * The program both worlds run. The case function comes first, so its lines match the corpus, and
 * is passed straight to a call, so no engine infers a name for it from an assignment.
 */
function programFor(testCase) {
  const parts = [`__run(function (console, advance) {\n${testCase.src}\n});`, 'function __run(__case) {']
  if (testCase.prelude) parts.push(testCase.prelude)
  if (testCase.stackTraceLimit !== undefined) parts.push(`Error.stackTraceLimit = ${testCase.stackTraceLimit};`)
  parts.push(testCase.kind === 'console' ? '__case(console, () => {});' : 'console.log(...__case(undefined, undefined));')
  parts.push('}')
  return parts.join('\n')
}

/** The first line of a failure, which both worlds report the same way. */
const threw = (message) => `<<threw ${String(message).split('\n')[0]}>>`

/** Node's output for every case, computed once in a plain Node child process. */
function oracleOutputs() {
  const jobs = cases.map((c) => ({ name: c.name, kind: c.kind, program: programFor(c), realm: c.oracleRealm }))
  jobs.push({ name: MUTATION_JOB, kind: 'format', program: mutationProgram(false) })
  const child = spawnSync(process.execPath, [fileURLToPath(new URL('./console-oracle.mjs', import.meta.url))], {
    input: JSON.stringify(jobs),
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  })
  if (child.status !== 0) throw new Error(`the oracle failed: ${child.stderr}`)
  return JSON.parse(child.stdout)
}

// The mutation pass: every value is built first, then the program replaces every built-in
// method and getter it can reach and deletes the globals, then logs the values.
const MUTATION_JOB = '<mutation pass>'
const mutationCases = cases.filter((c) => c.kind === 'format' && !c.noMutation && !c.prelude && !c.oracleRealm)
const MAX_ARGS = 12

function mutationProgram(mutate) {
  const lines = ['const __built = [];', 'function __try(f) { try { return f(undefined, undefined); } catch (e) { return ["<<case threw>>"]; } }']
  for (const c of mutationCases) lines.push(`__built.push(__try(function (console, advance) {\n${c.src}\n}));`)
  if (mutate) lines.push(MUTATIONS)
  // Built-ins are gone: call console.log with a fixed number of arguments.
  const calls = Array.from({ length: MAX_ARGS + 1 }, (_, n) =>
    `case ${n}: console.log(${Array.from({ length: n }, (_, i) => `a[${i}]`).join(', ')}); break;`)
  lines.push(`for (let i = 0; i < __built.length; i++) { const a = __built[i]; switch (a.length) { ${calls.join(' ')} default: console.log('too many arguments'); } }`)
  return lines.join('\n')
}

let runtime
let fiber
let oracle
beforeAll(async () => {
  ;({ runtime, fiber } = await loadIsolate())
  oracle = oracleOutputs()
})
afterAll(() => fiber.dispose())

describe(`console corpus in the isolate against Node ${process.version} (${cases.length} cases)`, () => {
  it('has at least 300 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(300)
  })

  it.each(cases.map((c) => [c.name, c]))('%s', async (_name, testCase) => {
    const program = programFor(testCase)
    const result = await runtime.run({ program, bindings: [] })
    const ours = [...result.logs]
    if (result.error) ours.push(threw(result.error.message))
    expect(ours).toEqual(oracle[testCase.name])
    const expected = expectedFor(testCase, HOST_MAJOR)
    if (expected !== undefined && testCase.kind === 'format') expect(ours[0]).toBe(expected)
  })
})

describe('console output after the program mutates every built-in', () => {
  it(`is unchanged for ${mutationCases.length} values`, async () => {
    expect(mutationCases.length).toBeGreaterThanOrEqual(300)
    const result = await runtime.run({ program: mutationProgram(true), bindings: [] })
    expect(result.error).toBeUndefined()
    const expected = oracle[MUTATION_JOB]
    expect(result.logs).toHaveLength(expected.length)
    for (let i = 0; i < expected.length; i++) expect([mutationCases[i].name, result.logs[i]]).toEqual([mutationCases[i].name, expected[i]])
  })
})

/** Runs `program` through the addon directly, with `nodeMajor` (omitted when undefined); resolves to its logs. */
function runWithMajor(program, nodeMajor) {
  return new Promise((resolve, reject) => {
    const options = {
      program,
      namespaces: [],
      computeMs: 5000,
      maxWallMs: 20000,
      maxOutputBytes: 1 << 20,
      maxOldGenerationSizeMb: 64,
      streamLogs: false,
    }
    if (nodeMajor !== undefined) options.nodeMajor = nodeMajor
    let run
    run = native.startIsolateRun(options, (kind, _id, _ns, _name, payload) => {
      if (kind !== 3) return
      run.join()
      if (payload.error) reject(new Error(`run failed: ${payload.error.message}`))
      else resolve(payload.logs)
    })
  })
}

const PROBE_PROGRAM = PROBES.map((src) => `console.log(${src});`).join('\n')

describe('the Node major the isolate console follows (docs/typescript.md#console-output-per-node-major)', () => {
  it(`follows this Node (${process.version}) through the runtime`, async () => {
    const result = await runtime.run({ program: PROBE_PROGRAM, bindings: [] })
    expect(result.error).toBeUndefined()
    expect(result.logs).toStrictEqual(PROBE_OUTPUT[HOST_MAJOR])
  })

  for (const major of Object.keys(PROBE_OUTPUT).map(Number)) {
    it(`prints what Node ${major} prints when a run asks for ${major}`, async () => {
      expect(await runWithMajor(PROBE_PROGRAM, major)).toStrictEqual(PROBE_OUTPUT[major])
    })
  }

  it(`follows the newest LTS (${NEWEST_LTS_MAJOR}) without a major or with one it does not know`, async () => {
    expect(await runWithMajor(PROBE_PROGRAM, undefined)).toStrictEqual(PROBE_OUTPUT[NEWEST_LTS_MAJOR])
    for (const major of UNKNOWN_MAJORS.filter((m) => Number.isInteger(m) && m >= 0)) {
      expect([major, await runWithMajor(PROBE_PROGRAM, major)]).toStrictEqual([major, PROBE_OUTPUT[NEWEST_LTS_MAJOR]])
    }
  })

  it('each run of one process gets its own major (runs interleaved)', async () => {
    const majors = [26, 20, 24, 22, 26, 20]
    const logs = await Promise.all(majors.map((m) => runWithMajor(PROBE_PROGRAM, m)))
    expect(logs).toStrictEqual(majors.map((m) => PROBE_OUTPUT[m]))
  })
})
