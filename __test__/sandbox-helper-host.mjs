// A host process for the sandbox helper's load-time check (sandbox-helper.test.mjs in a source
// checkout's layout, packaging.test.mjs in an installed one): it loads each runtime through cordis
// with its config and runs one program, and the words both runtimes refuse with.

/**
 * The host's source: imports the runtimes from `from` (a package name or a path), prints per
 * runtime `{ error: { message, code, path, problem } }` or `{ containment, sandbox, result }`.
 */
export const hostScript = (configs, from = './lib/index.mjs') => `
  import { Context } from 'cordis'
  import { IsolateCodeRuntime, PythonCodeRuntime } from ${JSON.stringify(from)}
  const classes = { isolate: IsolateCodeRuntime, python: PythonCodeRuntime }
  const out = {}
  for (const [name, config] of Object.entries(${JSON.stringify(configs)})) {
    const ctx = new Context()
    try {
      await ctx.plugin(classes[name], config)
    } catch (e) {
      out[name] = { error: { message: e.message, code: e.code, path: e.path, problem: e.problem } }
      continue
    }
    const runtime = ctx.codeRuntime
    const result = await runtime.run({ program: 'return 6 * 7', bindings: [] })
    out[name] = { containment: runtime.containment, sandbox: runtime.sandbox, result }
  }
  process.stdout.write(JSON.stringify(out))
  process.exit(0)
`

export const ANSWER = { logs: [], value: 42 }
/** `sandbox` of a Python runtime whose children start without the helper. */
export const UNSANDBOXED_PYTHON = { process: true, helper: false, namespaces: false, landlock: 0, seccomp: false, processCap: false, privateRoot: false, memoryCgroup: false }
/** `sandbox` of an isolate runtime on host threads. */
export const THREAD_SANDBOX = {
  process: false,
  helper: false,
  namespaces: false,
  landlock: 0,
  seccomp: false,
  seccompAllowlist: false,
  processCap: false,
  memoryCgroup: false,
  privateRoot: false,
}

const WORDS = {
  isolate: {
    loss: 'so isolates cannot run in sandbox processes.',
    optOut:
      "To run them on the host's threads on purpose, set `containment: 'thread'`, or `allowUnsandboxed: true` to do so only while the helper is unusable.",
  },
  python: {
    loss: 'so Python programs would run without the sandbox (no namespaces, Landlock, seccomp or process cap).',
    optOut: "To run them without it on purpose, set `allowUnsandboxed: true` in the runtime's config.",
  },
}

/** What the host prints when both runtimes refuse: `helper` `says`; `repair` is the install's fix. */
export function refusal(helper, problem, says, repair) {
  const error = ({ loss, optOut }) => ({
    error: {
      message: `code-runtime-native: the sandbox helper ${helper} ${says}, ${loss} Repair the install: ${repair} ${optOut}`,
      code: 'ERR_CODE_RUNTIME_NATIVE_SANDBOX_HELPER',
      path: helper,
      problem,
    },
  })
  return { isolate: error(WORDS.isolate), python: error(WORDS.python) }
}

/** Every layer holds around both runtimes (what a sound Linux install reports here). */
export function expectEveryLayer(out, expect) {
  expect(out.isolate).toMatchObject({
    containment: 'process',
    result: ANSWER,
    sandbox: { process: true, helper: true, namespaces: true, seccomp: true, seccompAllowlist: true, processCap: true },
  })
  expect(out.python).toMatchObject({ result: ANSWER, sandbox: { process: true, helper: true, namespaces: true, seccomp: true, processCap: true } })
  expect(out.isolate.sandbox.landlock).toBeGreaterThanOrEqual(6)
  expect(out.python.sandbox.landlock).toBeGreaterThanOrEqual(6)
}
