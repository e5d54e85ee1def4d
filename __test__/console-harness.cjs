'use strict';
// Runs the console corpus in two worlds and prints a JSON report on stdout.
//
//   node --expose-internals __test__/console-harness.cjs [--filter text]
//
// World "ours":   a fresh vm context, the console script (src/isolate/js/console/) evaluated in it
//                 with natives from Node internals (console-natives.cjs).
// World "oracle": a fresh vm context formatted by this Node's own
//                 util.formatWithOptions / Console.
// Both worlds evaluate each case's source through the same call site, so
// error stacks are identical text in both.
//
// Report: { node, results: [{ name, kind, ours, oracle, expected?,
//           startsWith?, endsWith?, error? }], mutation: [{ name, ours, oracle }] }

const vm = require('node:vm');
const util = require('node:util');
const { Console } = require('node:console');
const { Writable } = require('node:stream');
const { createNatives, loadInto } = require('./console-natives.cjs');

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
const LOG_OPTIONS = { depth: 4, maxArrayLength: 100, maxStringLength: 10000, breakLength: 80 };

// Fake clock shared by both consoles (ms).
const clock = { ms: 0 };
function advance(ms) { clock.ms += ms; }
function fakeHrtime(prev) {
  const ns = BigInt(Math.round(clock.ms * 1e6));
  if (prev === undefined) return [Number(ns / 1000000000n), Number(ns % 1000000000n)];
  const prevNs = BigInt(prev[0]) * 1000000000n + BigInt(prev[1]);
  const d = ns - prevNs;
  return [Number(d / 1000000000n), Number(d % 1000000000n)];
}

// Host helper available to cases as `__detach(arrayBuffer)` (a vm context
// has no structuredClone).
function detach(buffer) {
  structuredClone(buffer, { transfer: [buffer] });
}

function makeWorld(withOurs) {
  const context = vm.createContext({ __detach: detach });
  let api;
  if (withOurs) {
    api = loadInto(context, createNatives({ now: () => clock.ms }));
    // Follow this Node's major, as the runtime does with the host's.
    api.setNodeMajor(NODE_MAJOR);
    // Lets cases play "the runtime" registering a custom inspector.
    context.__defineCustomInspect = api.defineCustomInspect;
  }
  return { context, api };
}

// One call site for both worlds: stacks captured inside `src` are identical.
// A world whose context is null is this process's main realm (used for the
// oracle of cases marked `oracleRealm: 'main'`: Node's isError() uses
// `instanceof` with its own realm's Error, so those cases only show Node's
// real behaviour when the value comes from Node's realm).
function evalCase(world, testCase, args) {
  const { context } = world;
  const run = (code, filename) => (context === null ?
    vm.runInThisContext(code, { filename }) :
    vm.runInContext(code, context, { filename }));
  if (testCase.prelude) run(testCase.prelude, 'prelude.js');
  const ErrorCtor = run('Error', 'prelude.js');
  const savedLimit = ErrorCtor.stackTraceLimit;
  if (testCase.stackTraceLimit !== undefined) ErrorCtor.stackTraceLimit = testCase.stackTraceLimit;
  try {
    const fn = run(`(function (console, advance) {\n${testCase.src}\n})`, 'program.ts');
    return fn(args[0], args[1]);
  } finally {
    ErrorCtor.stackTraceLimit = savedLimit;
  }
}

function describeThrow(e) {
  return `<<threw ${e && e.stack ? String(e.stack).split('\n')[0] : String(e)}>>`;
}

function nodeConsole(chunks) {
  const stream = new Writable({
    decodeStrings: false,
    write(chunk, _enc, cb) { chunks.push(String(chunk)); cb(); },
  });
  return new Console({ stdout: stream, stderr: stream, colorMode: false, inspectOptions: { ...LOG_OPTIONS } });
}

function runConsoleCase(worlds, testCase) {
  const out = [];
  const saved = { hrtime: process.hrtime, emitWarning: process.emitWarning };
  process.hrtime = fakeHrtime;
  process.emitWarning = () => {};
  try {
    for (const world of worlds) {
      clock.ms = 1000;
      const entries = [];
      let con;
      if (world.api) {
        con = world.api.createConsole((s) => entries.push(s));
      } else {
        const chunks = [];
        con = nodeConsole(chunks);
        con.__chunks = chunks;
      }
      try {
        evalCase(world, testCase, [con, advance]);
      } catch (e) {
        entries.push(describeThrow(e));
      }
      if (!world.api) {
        for (const chunk of con.__chunks) entries.push(chunk.endsWith('\n') ? chunk.slice(0, -1) : chunk);
      }
      out.push(entries);
    }
  } finally {
    process.hrtime = saved.hrtime;
    process.emitWarning = saved.emitWarning;
  }
  return out;
}

globalThis.__detach = detach;
const MAIN_REALM = { context: null, api: null };

function runFormatCase(worlds, testCase) {
  const out = [];
  if (testCase.oracleRealm === 'main') worlds = [worlds[0], MAIN_REALM];
  for (const world of worlds) {
    let args;
    try {
      args = evalCase(world, testCase, [undefined, undefined]);
    } catch (e) {
      out.push(`<<case threw ${describeThrow(e)}>>`);
      continue;
    }
    try {
      out.push(world.api ? world.api.formatLog(args) : util.formatWithOptions(LOG_OPTIONS, ...args));
    } catch (e) {
      out.push(describeThrow(e));
    }
  }
  return out;
}

async function main() {
  const { CORPUS, MUTATIONS, knownDifferenceFor, expectedFor } = await import('./console-corpus.mjs');
  const filterIdx = process.argv.indexOf('--filter');
  const filter = filterIdx === -1 ? null : process.argv[filterIdx + 1];
  const corpus = filter ? CORPUS.filter((t) => t.name.includes(filter)) : CORPUS;

  const worlds = [makeWorld(true), makeWorld(false)];
  const results = [];
  for (const testCase of corpus) {
    const [ours, oracle] = testCase.kind === 'console' ?
      runConsoleCase(worlds, testCase) :
      runFormatCase(worlds, testCase);
    results.push({
      name: testCase.name, kind: testCase.kind, ours, oracle,
      expected: expectedFor(testCase, NODE_MAJOR), startsWith: testCase.startsWith, endsWith: testCase.endsWith,
      knownDifference: knownDifferenceFor(testCase, NODE_MAJOR),
    });
  }

  // Mutation: build every format case's arguments in a fresh world of ours
  // and a fresh oracle world (same call site, so stacks match), then let the
  // "program" mutate our world (MUTATIONS), then format. Must equal Node.
  const mutation = [];
  if (!process.argv.includes('--no-mutation')) {
    const mutated = makeWorld(true);
    const pristine = makeWorld(false);
    const formatCases = corpus.filter((t) => t.kind === 'format' && !knownDifferenceFor(t, NODE_MAJOR) && !t.noMutation);
    const built = [[], []];
    for (const testCase of formatCases) {
      const pair = testCase.oracleRealm === 'main' ? [mutated, MAIN_REALM] : [mutated, pristine];
      for (let w = 0; w < 2; w++) {
        try {
          built[w].push(evalCase(pair[w], testCase, [undefined, undefined]));
        } catch (e) {
          built[w].push(new Error(`case threw ${describeThrow(e)}`));
        }
      }
    }
    // A console call prepared before the mutation, run after it.
    const entries = [];
    const con = mutated.api.createConsole((s) => entries.push(s));
    const afterMutation = vm.runInContext(`(function () {
      const map = new Map([[1, 2]]);
      const rows = [{ a: 1 }];
      return function (console) {
        console.log('after %s', 'mutation', { a: [1, 2] });
        console.group('g'); console.table(rows); console.groupEnd();
        console.count(); console.assert(false, 'x'); console.dir(map);
        console.time('t'); console.timeEnd('t');
      };
    })()`, mutated.context);

    vm.runInContext(MUTATIONS, mutated.context, { filename: 'mutation.js' });

    for (let i = 0; i < formatCases.length; i++) {
      const out = [];
      for (let w = 0; w < 2; w++) {
        const args = built[w][i];
        try {
          if (args instanceof Error) out.push(`<<${args.message}>>`);
          else out.push(w === 0 ? mutated.api.formatLog(args) : util.formatWithOptions(LOG_OPTIONS, ...args));
        } catch (e) {
          out.push(describeThrow(e));
        }
      }
      mutation.push({ name: formatCases[i].name, ours: out[0], oracle: out[1] });
    }
    clock.ms = 0;
    try {
      afterMutation(con);
    } catch (e) {
      entries.push(describeThrow(e));
    }
    mutation.push({
      name: 'console after mutation',
      ours: entries.join('\n---\n'),
      oracle: [
        'after mutation { a: [ 1, 2 ] }', 'g', '  ┌─────────┬───┐\n  │ (index) │ a │\n  ├─────────┼───┤\n  │ 0       │ 1 │\n  └─────────┴───┘',
        'default: 1', 'Assertion failed: x', 'Map(1) { 1 => 2 }', 't: 0ms',
      ].join('\n---\n'),
    });
  }

  // Fuzz: our terminal-escape stripping and display width against Node's
  // (util.stripVTControlCharacters and the getStringWidth Node uses for
  // array grouping and console.table), on deterministic random strings.
  const fuzz = [];
  if (!process.argv.includes('--no-fuzz')) {
    const { getStringWidth } = require('internal/util/inspect');
    const api = makeWorld(true).api;
    const alphabet = ['\u001b', '\u001b', '\u009b', '[', ']', '(', ')', '#', ';', ';', '?', '0', '1', '2', '3',
      '12', '5', 'm', 'A', 'H', 'K', 'Q', 'R', 'Z', 'c', 'f', 'n', 'o', 'p', 'q', 'y', 'z', '=', '>', '<', '~',
      '\u0007', '\u009c', '\\', '-', '/', '&', '.', ':', '%', '@', '_', ' ', 'x', '\n', '\t', '\u007f',
      'é', 'e\u0301', '日', '👍', '\u200b', 'ｆ', '\ud800'];
    let seed = 0x2545f491;
    const random = () => {
      seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0;
      return seed / 4294967296;
    };
    for (let n = 0; n < 20000; n++) {
      let str = '';
      const len = 1 + Math.floor(random() * 14);
      for (let i = 0; i < len; i++) str += alphabet[Math.floor(random() * alphabet.length)];
      const checks = [
        ['strip', api.stripVTControlCharacters(str), util.stripVTControlCharacters(str)],
        ['width', api.getStringWidth(str, true), getStringWidth(str, true)],
        ['rawWidth', api.getStringWidth(str, false), getStringWidth(str, false)],
      ];
      for (const [what, ours, oracle] of checks) {
        if (ours !== oracle) fuzz.push({ what, input: str, ours, oracle });
      }
    }
  }

  // The per-major probes: our output with the console set to each major (and to majors it does
  // not know), and this Node's own.
  const { PROBES, PROBE_OUTPUT, UNKNOWN_MAJORS } = await import('./console-corpus.mjs');
  const probeWorld = makeWorld(true);
  const probeValues = PROBES.map((src) => vm.runInContext(`(${src})`, probeWorld.context));
  const flavours = [];
  for (const major of [...Object.keys(PROBE_OUTPUT).map(Number), ...UNKNOWN_MAJORS]) {
    const chosen = probeWorld.api.setNodeMajor(major);
    flavours.push({ major, chosen, output: probeValues.map((v) => probeWorld.api.formatLog([v])) });
  }
  const oracleContext = vm.createContext({});
  const probeOracle = PROBES.map((src) => util.formatWithOptions(LOG_OPTIONS, vm.runInContext(`(${src})`, oracleContext)));

  process.stdout.write(JSON.stringify({ node: process.version, results, mutation, fuzz, flavours, probeOracle }));
}

main().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exitCode = 1; });
