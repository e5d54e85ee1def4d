'use strict';
// The `natives` interface of the console script (src/isolate/js/console/, its parts joined by
// join.cjs there as the runtime joins them), implemented from Node internals so the formatter
// can run in plain Node (tests and benchmark). Requires `node --expose-internals`. See the
// header of the script (00-header.js) for the contract; the Rust side implements the same
// functions with the v8 crate.

const path = require('node:path');
const vm = require('node:vm');
const { types } = require('node:util');
const { internalBinding } = require('internal/test/binding');

const {
  getProxyDetails,
  getPromiseDetails,
  previewEntries,
  getOwnNonIndexProperties,
  getConstructorName,
  constants: { ALL_PROPERTIES, ONLY_ENUMERABLE },
} = internalBinding('util');

const SharedArrayBufferByteLength = Function.prototype.call.bind(
  Object.getOwnPropertyDescriptor(SharedArrayBuffer.prototype, 'byteLength').get);

const CONSOLE_DIR = path.join(__dirname, '..', 'src', 'isolate', 'js', 'console');
const { joinConsoleScript } = require(path.join(CONSOLE_DIR, 'join.cjs'));
const INSPECT_FILENAME = 'code-runtime-native:console';

function typeTag(v) {
  if (types.isProxy(v)) return 1;
  if (Array.isArray(v)) return 2;
  if (typeof v === 'function') {
    const isAsync = types.isAsyncFunction(v);
    const isGen = types.isGeneratorFunction(v);
    if (isAsync) return isGen ? 6 : 4;
    return isGen ? 5 : 3;
  }
  if (types.isNativeError(v)) return 7;
  if (types.isDate(v)) return 8;
  if (types.isRegExp(v)) return 9;
  if (types.isMap(v)) return 10;
  if (types.isSet(v)) return 11;
  if (types.isWeakMap(v)) return 12;
  if (types.isWeakSet(v)) return 13;
  if (types.isMapIterator(v)) return 14;
  if (types.isSetIterator(v)) return 15;
  if (types.isPromise(v)) return 16;
  if (types.isArrayBuffer(v)) return 17;
  if (types.isSharedArrayBuffer(v)) return 18;
  if (types.isDataView(v)) return 19;
  if (types.isTypedArray(v)) return 20;
  if (types.isNumberObject(v)) return 21;
  if (types.isStringObject(v)) return 22;
  if (types.isBooleanObject(v)) return 23;
  if (types.isBigIntObject(v)) return 24;
  if (types.isSymbolObject(v)) return 25;
  if (types.isArgumentsObject(v)) return 26;
  if (types.isModuleNamespaceObject(v)) return 27;
  return 0;
}

/**
 * @param {object} [options]
 * @param {() => number} [options.now] clock for console.time*
 * @param {(frames: string[]) => string[]} [options.filterFrames]
 */
function createNatives(options = {}) {
  const now = options.now || (() => performance.now());
  return {
    typeTag,
    proxyTarget(p) {
      const t = getProxyDetails(p, false);
      return t === undefined ? null : t;
    },
    proxyHandler(p) {
      const d = getProxyDetails(p, true);
      return d === undefined || d === null ? null : d[1];
    },
    promiseState(p) {
      const d = getPromiseDetails(p);
      return [d[0], d[0] === 0 ? undefined : d[1]];
    },
    previewEntries(v) {
      if (types.isWeakMap(v) || types.isWeakSet(v)) {
        const entries = previewEntries(v);
        return [entries, types.isWeakMap(v)];
      }
      return previewEntries(v, true);
    },
    sharedByteLength(buffer) {
      return SharedArrayBufferByteLength(buffer);
    },
    ownNonIndexKeys(o, onlyEnumerable) {
      return getOwnNonIndexProperties(o, onlyEnumerable ? ONLY_ENUMERABLE : ALL_PROPERTIES);
    },
    constructorName(o) {
      return getConstructorName(o);
    },
    now,
    // Mimics what Error.captureStackTrace(err, trace) gives Node's
    // console.trace: the frames below the console method, at most 10.
    stackFrames() {
      const holder = {};
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 100;
      Error.captureStackTrace(holder);
      Error.stackTraceLimit = limit;
      const lines = String(holder.stack).split('\n').slice(1);
      let i = 0;
      while (i < lines.length &&
             (lines[i].includes(__filename) || lines[i].includes(INSPECT_FILENAME))) {
        i++;
      }
      return lines.slice(i, i + 10).join('\n');
    },
  };
}

let compiled;
/**
 * Evaluate the console script in `context` (a vm context) and return its API, set to follow this Node's
 * major (as the runtime sets it to the host's).
 */
function loadInto(context, natives) {
  compiled ??= new vm.Script(joinConsoleScript(), { filename: INSPECT_FILENAME });
  const factory = compiled.runInContext(context);
  const api = factory(natives);
  api.setNodeMajor(Number(process.versions.node.split('.')[0]));
  return api;
}

module.exports = { createNatives, loadInto, typeTag, CONSOLE_DIR, INSPECT_FILENAME };
