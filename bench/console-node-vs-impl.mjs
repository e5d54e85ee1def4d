// Micro-benchmark: 10 000 console.log calls of a mixed object.
//
//   node bench/console-node-vs-impl.mjs          (re-runs itself with --expose-internals)
//
// "ours":  the console script (src/isolate/js/console/) loaded in a fresh vm context (natives from
//          Node internals, see __test__/console-natives.cjs); the loop runs
//          inside that context and calls console.log of createConsole(),
//          whose entries are pushed into an array.
// "node":  the same loop in Node's realm through util.format (and, for an
//          options-equal comparison, util.formatWithOptions with the
//          console's inspect options) into an array.
// Prints the median of several rounds and the ratio ours / node.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import util from 'node:util';
import vm from 'node:vm';

if (!process.execArgv.includes('--expose-internals')) {
  const r = spawnSync(process.execPath, ['--expose-internals', '--no-warnings', fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const require = createRequire(import.meta.url);
const { createNatives, loadInto } = require('../__test__/console-natives.cjs');

const CALLS = 10_000;
const ROUNDS = Number(process.env.ROUNDS || 7);
const LOG_OPTIONS = { depth: 4, maxArrayLength: 100, maxStringLength: 10000, breakLength: 80 };

// The workload, as source so both realms build their own values.
const WORKLOAD = `(function run(log, calls) {
  for (let i = 0; i < calls; i++) {
    const obj = {
      id: i,
      name: 'item ' + i,
      tags: ['alpha', 'beta', 'gamma'],
      nested: { ok: i % 2 === 0, score: i / 7, list: [1, 2, 3, i] },
      when: new Date(1700000000000 + i),
      lookup: new Map([['k', i], ['j', 'v']]),
      nothing: null,
      missing: undefined,
    };
    log('row %d', i, obj);
  }
})`;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

function time(fn) {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

// ours
const context = vm.createContext();
const api = loadInto(context, createNatives());
const oursEntries = [];
const ourConsole = api.createConsole((s) => { oursEntries.push(s); });
const runInContext = vm.runInContext(WORKLOAD, context);
// node
const runInNode = vm.runInThisContext(WORKLOAD);
const nodeEntries = [];
const nodeFormat = (...args) => { nodeEntries.push(util.format(...args)); };
const nodeFormatOpts = (...args) => { nodeEntries.push(util.formatWithOptions(LOG_OPTIONS, ...args)); };

// Same output?
runInContext(ourConsole.log, 50);
runInNode(nodeFormatOpts, 50);
const same = oursEntries.every((s, i) => s === nodeEntries[i]);

const results = { ours: [], nodeFormat: [], nodeFormatWithOptions: [] };
for (let r = 0; r < ROUNDS; r++) {
  oursEntries.length = 0;
  nodeEntries.length = 0;
  results.ours.push(time(() => runInContext(ourConsole.log, CALLS)));
  results.nodeFormat.push(time(() => runInNode(nodeFormat, CALLS)));
  nodeEntries.length = 0;
  results.nodeFormatWithOptions.push(time(() => runInNode(nodeFormatOpts, CALLS)));
}

const ours = median(results.ours);
const nf = median(results.nodeFormat);
const nfo = median(results.nodeFormatWithOptions);
console.log(`node ${process.version}, ${CALLS} calls, median of ${ROUNDS} rounds`);
console.log(`  outputs identical to Node: ${same}`);
console.log(`  ours (console script in a vm context):     ${ours.toFixed(1)} ms`);
console.log(`  node util.format:                          ${nf.toFixed(1)} ms   ratio ours/node ${(ours / nf).toFixed(2)}x`);
console.log(`  node util.formatWithOptions(console opts): ${nfo.toFixed(1)} ms   ratio ours/node ${(ours / nfo).toFixed(2)}x`);
console.log(`  sample entry: ${JSON.stringify(oursEntries[oursEntries.length - 1])}`);
