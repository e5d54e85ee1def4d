// `executionInstructions`: the model-facing text that says what a program of each backend can
// use. The host appends it to the `run_code` description the model reads, so every word must be
// true: `__test__/ptc-instructions.test.mjs` checks the TypeScript text against a golden copy
// and against real runs (every global it names exists, every API it says is absent is absent).

/** The globals a TypeScript program has besides ECMAScript's, as the text names them. */
export const ISOLATE_GLOBALS = Object.freeze([
  'console',
  'process',
  'setTimeout',
  'clearTimeout',
  'setInterval',
  'clearInterval',
  'queueMicrotask',
  'structuredClone',
  'TextEncoder',
  'TextDecoder',
  'atob',
  'btoa',
  'URL',
  'URLSearchParams',
  'crypto',
  'performance',
])

/** Node and browser APIs a TypeScript program does not have, as the text names them. */
export const ISOLATE_ABSENT = Object.freeze([
  'require',
  'fetch',
  'Buffer',
  'setImmediate',
  'WebAssembly',
  'XMLHttpRequest',
  'WebSocket',
  'Deno',
  'Bun',
])

const list = (names) => names.map((name) => `\`${name}\``).join(', ')

/** @param {{ computeMs: number, maxOldGenerationSizeMb: number, maxOutputBytes: number }} config */
export function isolateInstructions(config) {
  return [
    'Each call runs in a fresh V8 isolate: no state survives between calls, and there is no Node.js, no file system, no network and no child processes. The working directory a call names matters only to the host functions the program calls: the program itself reads and writes no file, under any sandbox policy.',
    'The program is the body of an async function: use top-level `await`, and `return` a JSON value. Only erasable TypeScript syntax (no `enum`, no namespaces); there is no `import` statement and no `require`, and `import()` loads only `data:` URLs of JavaScript modules and the built-in `node:vm` (no package, no file, no other `node:` module).',
    'Host functions are the namespaces the host passes (such as `tools`): `await tools.name(args)`; arguments and results are JSON. A failed call rejects with the namespace\'s error class (such as `ToolCallError`, with the failed function\'s name in `toolName`): catch it to handle and continue.',
    'Output is what the program prints with `console` (log, info, warn, error, dir, table and the rest, formatted as Node formats them) or `process.stdout.write`, and what it returns; nothing else comes back.',
    `Globals besides ECMAScript's: ${list(ISOLATE_GLOBALS)} (\`crypto\` has \`getRandomValues\` and \`randomUUID\`, \`performance\` has \`now\`, \`process\` has an empty \`env\`, \`stdout.write\`, \`stderr.write\` and \`exit\`).`,
    `Not available: ${list(ISOLATE_ABSENT)}.`,
    `Budgets: ${config.computeMs} ms of CPU time (waiting for host functions and timers is free), a ${config.maxOldGenerationSizeMb} MiB heap, ${config.maxOutputBytes} bytes of output (logs and the returned value together), and the call's elapsed deadline; a run past one ends with an error that names it.`,
  ].join('\n')
}

/**
 * What a Python program may do with files and the network. Where a mode is advertised, each call
 * runs under its own policy (the session's mode, or one the user approved for this call), so the
 * text names what each mode allows rather than the deployment's default.
 */
const FILES = {
  none: 'There is no network, and the program can write only its own temporary directory (`TMPDIR`), which is removed after the call.',
  policy:
    "It starts in the working directory the call names, and what it may do with files follows the call's sandbox policy: " +
    'under `read-only` it can read the workspace and write only its own temporary directory (`TMPDIR`, removed after the call), ' +
    'under `workspace-write` it can also write the workspace, and under `danger-full-access` it can also use the network, which it has under no other mode.',
}

/**
 * @param {{ cpuSeconds: number, maxLogBytes: number, maxValueBytes: number }} config
 * @param {string} version the probed interpreter's, e.g. `cpython 3 11 7`
 * @param {string} [mode] the advertised `sandboxMode` (absent: no file policy is enforced)
 */
export function pythonInstructions(config, version, mode) {
  const digits = /(\d+)\D+(\d+)\D+(\d+)/.exec(version)
  const name = digits ? `CPython ${digits.slice(1).join('.')}` : 'CPython'
  return [
    `Each call runs in a fresh ${name} process (isolated mode): no state survives between calls. ${mode === undefined ? FILES.none : FILES.policy}`,
    'The program is the body of an async function: use top-level `await`, and `return` a JSON value.',
    'Host functions are the namespaces the host passes (such as `tools`): `await tools.name(args)`; arguments and results are JSON. A failed call raises the namespace\'s error class (such as `ToolCallError`, with the failed function\'s name in `toolName`).',
    'Output is what the program prints (stdout and stderr) and what it returns; nothing else comes back.',
    `Budgets: ${config.cpuSeconds} s of CPU time, ${config.maxLogBytes} bytes of printed output, ${config.maxValueBytes} bytes of returned value, and the call's elapsed deadline; a run past one ends with an error that names it.`,
  ].join('\n')
}
