// The console parity corpus.
//
// Every case is JavaScript source evaluated identically in two fresh vm
// contexts ("worlds"): one where the console formatter (src/isolate/js/console/) was loaded
// (ours) and one untouched (the oracle, formatted by Node's own util / Console).
//
// Case kinds:
//   format  (default)  `src` is a function body returning the argument list;
//                      ours: api.formatLog(args), oracle:
//                      util.formatWithOptions(LOG_OPTIONS, ...args).
//   console            `src` is a function body run with (console, advance):
//                      ours: createConsole(emit), oracle: new Console({...,
//                      inspectOptions: LOG_OPTIONS}); every chunk written is
//                      compared (Node's trailing '\n' removed). `advance(ms)`
//                      moves the fake clock both consoles use.
//
// Optional fields: `prelude` (source run first in the world, filename
// prelude.js), `stackTraceLimit` (set on the world's Error while the case
// runs), `expected` (exact string: for format cases the formatLog result, for
// console cases the array of entries) — the worked examples of the console's
// behaviour (docs/typescript.md#console) are written out this way —,
// `expectedSince: { [major]: output }` (where that output changed in a later
// Node major, see expectedFor),
// `startsWith`/`endsWith` (partial expectations), `oracleRealm: 'main'`
// (the oracle evaluates the case in Node's own realm: for values whose Node
// rendering depends on `instanceof Error` with Node's realm), and
// `knownDifference: { reason, ours, majors? }` (a documented, intentional
// difference: we assert our exact output and that Node's differs; with
// `majors`, only when running under one of those Node majors, see
// knownDifferenceFor), `noMutation` (left
// out of the mutation pass).
//
// The source is wrapped as "(function (console, advance) {\n" + src + "\n})"
// and compiled with filename program.ts, so line 1 of `src` is program.ts:2.

export const LOG_OPTIONS = Object.freeze({ depth: 4, maxArrayLength: 100, maxStringLength: 10000, breakLength: 80 });

const cases = [];
let group = '';
function section(name) { group = name; }
function c(src, extra) {
  cases.push({ name: `${group}: ${src.length > 90 ? `${src.slice(0, 87)}...` : src}`, kind: 'format', src: `return [${src}];`, ...extra });
}
function body(name, src, extra) {
  cases.push({ name: `${group}: ${name}`, kind: 'format', src, ...extra });
}
function con(name, src, extra) {
  cases.push({ name: `${group}: ${name}`, kind: 'console', src, ...extra });
}

const TOOL_CALL_ERROR = `globalThis.ToolCallError = class ToolCallError extends Error {
  constructor(message, toolName) { super(message); this.name = 'ToolCallError'; this.toolName = toolName; }
};`;

// ---------------------------------------------------------------------------
// docs/typescript.md#console: the examples with their exact entries.
section('worked examples');
c(`'point', {x:1,y:2}`, { expected: 'point { x: 1, y: 2 }' });
c(`'plain', { a: 1 }`, { expected: 'plain { a: 1 }' });
c(`"got", 42`, { expected: 'got 42' });
c(`'%s', 1`, { expected: '1' });
c(`'%d items', 3, 'more'`, { expected: '3 items more' });
c(``, { expected: '' });
c(`['a', 1]`, { expected: "[ 'a', 1 ]" });
c(`['a\\nb']`, { expected: "[ 'a\\nb' ]" });
c(`["it's"]`, { expected: '[ "it\'s" ]' });
c(`1, true, null, undefined`, { expected: '1 true null undefined' });
c(`-0`, { expected: '-0' });
c(`10n`, { expected: '10n' });
c(`NaN, Infinity`, { expected: 'NaN Infinity' });
c(`Symbol('s')`, { expected: 'Symbol(s)' });
c(`() => 1`, { expected: '[Function (anonymous)]' });
c(`function foo(){}`, { expected: '[Function: foo]' });
c(`new Map([[1,2]])`, { expected: 'Map(1) { 1 => 2 }' });
c(`new Set([1])`, { expected: 'Set(1) { 1 }' });
c(`new Date(0)`, { expected: '1970-01-01T00:00:00.000Z' });
c(`Object.create(null)`, { expected: '[Object: null prototype] {}' });
c(`new (class Foo { x = 1 })()`, { expected: 'Foo { x: 1 }' });
body('a cycle', `const a = {}; a.self = a; return [a];`, { expected: '<ref *1> { self: [Circular *1] }' });
c(`[undefined, , 3]`, { expected: '[ undefined, <1 empty item>, 3 ]' });
c(`{ get a() { return 1 } }`, { expected: '{ a: [Getter] }' });
c(`{ 'a-b': 1 }`, { expected: "{ 'a-b': 1 }" });
c(`{ 'key with space': 1, valid_id: 2, 3: 'three' }`, { expected: "{ '3': 'three', 'key with space': 1, valid_id: 2 }" });
c(`[1.5, -0, 1e21, 2**53]`, { expected: '[ 1.5, -0, 1e+21, 9007199254740992 ]' });
c(`new Uint8Array([1,2,3])`, { expected: 'Uint8Array(3) [ 1, 2, 3 ]' });
c(`Promise.resolve(1)`, { expected: 'Promise { 1 }' });
c(`{a:{b:{c:{d:{e:{f:1}}}}}}`, { expected: '{\n  a: {\n    b: { c: { d: { e: [Object] } } }\n  }\n}' });
c(`[[[[[[1]]]]]]`, { expected: '[\n  [\n    [ [ [ [Array] ] ] ]\n  ]\n]' });
c(`Array.from({length: 30}, (_, i) => i)`, { expected: '[\n   0,  1,  2,  3,  4,  5,  6,  7,  8,\n   9, 10, 11, 12, 13, 14, 15, 16, 17,\n  18, 19, 20, 21, 22, 23, 24, 25, 26,\n  27, 28, 29\n]' });
c(`Array.from({length: 150}, (_, i) => i)`, { endsWith: '\n  96, 97, 98, 99,\n  ... 50 more items\n]' });
c(`['x'.repeat(10005)]`, { endsWith: "xxx'... 5 more characters\n]" });
c(`{name:'alpha',items:[1,2,3],nested:{ok:true,list:['x','y']},when:null,count:12345678901234567890}`, { expected: "{\n  name: 'alpha',\n  items: [ 1, 2, 3 ],\n  nested: { ok: true, list: [ 'x', 'y' ] },\n  when: null,\n  count: 12345678901234567000\n}" });
c(`new Error('e')`, { startsWith: 'Error: e\n' });

// docs/typescript.md#console: the cases checked against real Node.
section('corpus');
c(`{ m: new Map([['a', new Set([1, 2])], ['b', new Map([[{k: 1}, [1, 2]]])]]) }`);
c(`{ s: new Set([new Set([1]), new Map([[1, new Set()]])]), t: [new Map()] }`);
c(`['apple', 'banana', 'cherry', 'date', 'elderberry', 'fig', 'grape', 'honeydew']`);
c(`['a', 'bb', 'ccc', 'dddd', 'eeeee', 'ffffff', 'g', 'hh', 'iii', 'jjjj', 'kkkkk', 'llllll', 'm']`);
c(`{ alpha: 'aaaaaaaaaaaa', beta: 'bbbbbbbbbbbbbbb', gamma: 'gggggggggggggg', delta: 'ddddddddddd', epsilon: 1 }`);
c(`{ 'a b': 1, 'c-d': 2, 'e.f': 3, '1x': 4, x1: 5, '': 6, 'ünï': 7, "q'uote": 8, 'dq"': 9 }`);
c(`[0, -0, [-0], { z: -0 }]`);
c(`{ [Symbol('sym')]: 1, [Symbol()]: 2, [Symbol.iterator]: 3, regular: 4 }`);
body('class instance with null-prototype fields', `class Holder { constructor() { this.bag = Object.create(null); this.bag.k = 1; this.empty = Object.create(null); } } return [new Holder()];`);
body('thrown-and-caught ToolCallError', `let e = new ToolCallError('nope', 'fail');\nreturn [e];`, {
  prelude: TOOL_CALL_ERROR, stackTraceLimit: 1,
  expected: "ToolCallError: nope\n    at program.ts:2:9 {\n  toolName: 'fail'\n}",
});
body('ToolCallError whose constructor name differs (B [ToolCallError])', `let e = new B('nope');\nreturn [e];`, {
  prelude: `globalThis.B = class B extends Error { constructor(m) { super(m); this.name = 'ToolCallError'; } };`,
  stackTraceLimit: 1,
  expected: 'B [ToolCallError]: nope\n    at program.ts:2:9',
});
c(`new Int8Array([-1, 2]), new Uint16Array(3), new Float64Array([1.5, -0, NaN]), new BigInt64Array([1n, -2n])`);
body('Promise states', `const rejected = Promise.reject(new Error('boom')); rejected.catch(() => {}); return [new Promise(() => {}), Promise.resolve({ ok: true }), rejected];`);
body('rejected with primitive', `const p = Promise.reject(42); p.catch(() => {}); return [p];`);

section('brief items');
body('[class Bar extends Foo]', `class Foo {} class Bar extends Foo {} return [Foo, Bar];`, { expected: '[class Foo] [class Bar extends Foo]' });
c(`new Uint8Array([1, 2]).buffer`, {
  expected: 'ArrayBuffer { [Uint8Contents]: <01 02>, byteLength: 2 }',
  expectedSince: { 22: 'ArrayBuffer { [Uint8Contents]: <01 02>, [byteLength]: 2 }' },
});
c(`new Map([[1, 'a']]).keys(), new Map([[1, 'a']]).entries(), new Set([1]).values()`, { expected: "[Map Iterator] { 1 } [Map Entries] { [ 1, 'a' ] } [Set Iterator] { 1 }" });
c(`new WeakMap(), new WeakSet()`, { expected: 'WeakMap { <items unknown> } WeakSet { <items unknown> }' });
c(`new Number(3), new String('x'), new Boolean(true)`, { expected: "[Number: 3] [String: 'x'] [Boolean: true]" });
c(`async function af() {}, function* g() {}, async function* ag() {}, function b() {}.bind(null)`, { expected: '[AsyncFunction: af] [GeneratorFunction: g] [AsyncGeneratorFunction: ag] [Function: bound b]' });
body('null-prototype class field', `class Foo { x = 1; bag = Object.create(null); } return [new Foo()];`, { expected: 'Foo { x: 1, bag: [Object: null prototype] {} }' });
body('multiple circular refs', `const a = { n: 1 }; const b = { a }; a.b = b; a.me = a; return [[a, b]];`, { expected: '[\n  <ref *1> { n: 1, b: { a: [Circular *1] }, me: [Circular *1] },\n  <ref *2> { a: <ref *1> { n: 1, b: [Circular *2], me: [Circular *1] } }\n]' });
c(`{ s: 'x'.repeat(10005) }`, { endsWith: "xxx'... 5 more characters\n}" });
c(`new Date(NaN), /a+/gi`, { expected: 'Invalid Date /a+/gi' });
body('Promise pending / rejected', `const r = Promise.reject(3); r.catch(() => {}); return [new Promise(() => {}), r];`, { expected: 'Promise { <pending> } Promise { <rejected> 3 }' });
c(`new Proxy({ shown: 'target' }, { get() { return 'trap'; } })`, { expected: "{ shown: 'target' }", expectedSince: { 26: "Proxy({ shown: 'target' })" } });
c(`new DataView(new ArrayBuffer(2))`, {
  expected: 'DataView {\n  byteLength: 2,\n  byteOffset: 0,\n  buffer: ArrayBuffer { [Uint8Contents]: <00 00>, byteLength: 2 }\n}',
  expectedSince: { 22: 'DataView {\n  [byteLength]: 2,\n  [byteOffset]: 0,\n  [buffer]: ArrayBuffer { [Uint8Contents]: <00 00>, [byteLength]: 2 }\n}' },
});

// ---------------------------------------------------------------------------
section('primitives');
c(`0, 1, -1, 1.5, -1.5, 0.1 + 0.2, 1e21, 1e-7, 123456789012345680000, Number.MAX_SAFE_INTEGER, Number.MIN_VALUE`);
c(`-Infinity, NaN, -0, +0`);
c(`0n, -5n, 123456789012345678901234567890n`);
c(`true, false`);
c(`undefined`);
c(`null`);
c(`Symbol(), Symbol(''), Symbol('with space'), Symbol.for('reg'), Symbol.iterator, Symbol("it's")`);
c(`[Symbol('a\\nb'), Symbol("q'")]`);
c(`[true, false, null, undefined, 0n, -0, NaN]`);

section('strings');
c(`'top level string is verbatim'`);
c(`'a', 'b', 'c'`);
c(`'first', 'second\\nline', 'third'`);
c(`1, 'then string'`);
c(`['single']`);
c(`['dou"ble']`);
c(`["it's"]`);
c(`["it's \\"both\\""]`);
c(`["it's \\"both\\" and \`tick\`"]`);
c(`["it's \\"both\\" and \${tpl}"]`);
c(`['back\\\\slash', 'tab\\there', 'nul\\0', 'bell\\x07', 'esc\\x1b', 'del\\x7f', 'c1\\x85', 'nbsp\\xa0']`);
c(`['\\ud83d\\ude00', '\\ud800', 'x\\udc00y', '\\ud800\\ud800', 'é', '日本語', 'ﬀ']`);
c(`['\\b\\f\\v\\r']`);
c(`[''], ['']`);
c(`{ s: 'line1\\nline2\\nline3 that is long enough to split across the break length of eighty' }`);
c(`['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\\n']`);
c(`['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\nb']`);
c(`['short\\nlines\\nonly']`);
c(`{ k: "mixed 'quotes'\\nand \\"more\\" lines that go on and on and on and on and on and on" }`);
c(`['x'.repeat(10000)]`);
c(`['x'.repeat(10001)]`);
c(`{ big: 'y'.repeat(20000) }`);
c(`'z'.repeat(20000)`);
c(`['a'.repeat(77)]`);
c(`['a'.repeat(78)]`);
c(`[['a'.repeat(70)]]`);
c(`new Array(5).fill('abcdefghijklmnopqrstuvwxyz0123456789')`);

// ---------------------------------------------------------------------------
section('arrays');
c(`[]`);
c(`[[]]`);
c(`[1, 2, 3]`);
c(`[, ]`);
c(`[, , ]`);
c(`[1, , , 4]`);
c(`[1, , , , , , , , , , 11]`);
c(`new Array(5)`);
c(`new Array(200)`);
body('sparse with huge length', `const a = []; a[1000000] = 1; return [a];`);
body('sparse tail', `const a = [1, 2]; a.length = 10; return [a];`);
body('array with extra props', `const a = [1, 2]; a.extra = 'x'; a['key with space'] = 2; return [a];`);
body('array with only extra props', `const a = []; a.foo = 1; return [a];`);
body('array with symbol prop', `const a = [1]; a[Symbol('s')] = 2; return [a];`);
body('array with getter element', `const a = [1]; Object.defineProperty(a, 1, { get() { return 2; }, enumerable: true }); return [a];`);
body('array with non-enumerable element', `const a = [1, 2]; Object.defineProperty(a, 0, { value: 9, enumerable: false }); return [a];`);
body('array subclass', `class MyArr extends Array {} return [MyArr.from([1, 2]), new MyArr()];`);
body('array with toStringTag', `const a = [1]; Object.defineProperty(a, Symbol.toStringTag, { value: 'Tagged' }); return [a];`);
body('null-prototype array', `const a = [1, 2]; Object.setPrototypeOf(a, null); return [a];`);
c(`Array.from({ length: 101 }, (_, i) => i)`);
c(`Array.from({ length: 100 }, (_, i) => i)`);
c(`Array.from({ length: 7 }, (_, i) => i)`);
c(`Array.from({ length: 6 }, (_, i) => i)`);
c(`Array.from({ length: 27 }, (_, i) => i * 1000)`);
c(`Array.from({ length: 40 }, (_, i) => i % 3 ? i : -i * 100)`);
c(`Array.from({ length: 26 }, (_, i) => String.fromCharCode(97 + i))`);
c(`Array.from({ length: 30 }, (_, i) => 'item' + i)`);
c(`Array.from({ length: 12 }, (_, i) => i % 2 ? 'x' : i)`);
c(`Array.from({ length: 20 }, (_, i) => BigInt(i) * 1000n)`);
c(`Array.from({ length: 16 }, (_, i) => i / 3)`);
c(`Array.from({ length: 10 }, (_, i) => ({ i }))`);
c(`Array.from({ length: 10 }, (_, i) => [i, i])`);
c(`Array.from({ length: 8 }, (_, i) => 'x'.repeat(i * 3))`);
c(`Array.from({ length: 9 }, (_, i) => 'w'.repeat(20))`);
c(`Array.from({ length: 30 }, (_, i) => i % 5 === 0 ? 'a much longer string entry' : 's')`);
c(`Array.from({ length: 120 }, (_, i) => 'v' + i)`);
c(`Array.from({ length: 15 }, (_, i) => ['日本', 'é', 'x', '👍', 'ab'][i % 5])`);
c(`{ nested: Array.from({ length: 25 }, (_, i) => i) }`);
c(`{ a: { b: Array.from({ length: 25 }, (_, i) => i * 7) } }`);
c(`[1, 2, 3, 4, 5, 6, 7, [8, 9]]`);
body('grouped array with extra key', `const a = [1, 2, 3, 4, 5, 6, 7]; a.k = 'v'; return [a];`);
body('grouped array with holes', `const a = [1, 2, 3, , 5, 6, 7, 8]; return [a];`);
c(`[-0, 0, -0.5, 1e300, -1e-300]`);
c(`[[1, 2, [3, 4, [5, 6, [7, 8, [9]]]]]]`);
c(`[{ a: 1, b: { c: [1, { d: 2 }] } }]`);
c(`[[], {}, [[]], [{}], { a: [] }]`);
c(`[new Array(3), [undefined], [null]]`);
c(`Array.from({ length: 5 }, () => Array.from({ length: 5 }, (_, j) => j))`);

// ---------------------------------------------------------------------------
section('objects');
c(`{}`);
c(`{ a: 1 }`);
c(`{ a: undefined, b: null }`);
c(`{ 0: 'a', 1: 'b', 10: 'c', 2: 'd' }`);
c(`{ b: 1, a: 2, 1: 3, '-1': 4, '01': 5 }`);
c(`{ __proto__: null, a: 1 }`);
c(`{ ['__proto__']: 1 }`);
c(`{ $dollar: 1, _under: 2, camelCase: 3, with_digits9: 4, '9lead': 5 }`);
c(`{ 'tab\\there': 1, 'nl\\nkey': 2, "q'k": 3, 'bs\\\\': 4 }`);
c(`{ a: 1, b: 'two', c: [3], d: { e: 4 }, f: null, g: undefined, h: true, i: 5n, j: Symbol('j') }`);
c(`{ fn() {}, arrow: () => {}, async am() {}, *gen() {}, async *ag() {} }`);
c(`{ get g() { return 1 }, set s(v) {}, get gs() { return 1 }, set gs(v) {} }`);
body('non-enumerable property is hidden', `const o = { a: 1 }; Object.defineProperty(o, 'hidden', { value: 2 }); return [o];`);
body('own enumerable toStringTag is a property', `return [{ [Symbol.toStringTag]: 'Own', a: 1 }];`);
body('inherited toStringTag', `const p = { [Symbol.toStringTag]: 'Inh' }; return [Object.create(p)];`);
body('non-enumerable own toStringTag', `const o = { a: 1 }; Object.defineProperty(o, Symbol.toStringTag, { value: 'Hidden' }); return [o];`);
body('null prototype with toStringTag', `const o = Object.create(null); Object.defineProperty(o, Symbol.toStringTag, { value: 'T' }); o.x = 1; return [o];`);
body('null prototype with keys', `const o = Object.create(null); o.a = 1; o.b = { c: 2 }; return [o];`);
body('object with prototype that has null prototype', `const o = Object.create(Object.create(null)); o.a = 1; return [o];`);
body('object with constructor property', `return [{ constructor: 'not a function', a: 1 }, { constructor: function Fake() {} }];`);
body('Object.create(Array.prototype)', `return [Object.create(Array.prototype)];`);
c(`{ aaaaaaaaaa: 1111111111, bbbbbbbbbb: 2222222222, cccccccccc: 3333333333, dddddddddd: 4 }`);
c(`{ aaaaaaaaaa: 1111111111, bbbbbbbbbb: 2222222222, cccccccccc: 3333333333, ddddddddd: 4 }`);
c(`{ a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9, j: 10, k: 11, l: 12, m: 13, n: 14, o: 15, p: 16, q: 17, r: 18, s: 19, t: 20, u: 21, v: 22, w: 23, x: 24, y: 25, z: 26 }`);
c(`{ list: [1, 2, 3], map: new Map([['k', 'v']]), set: new Set(['x']), date: new Date(86400000), re: /x/g }`);
c(`{ deep: { deeper: { deepest: { bottom: { floor: 'x' } } } }, flat: 1 }`);
c(`{ a: { b: 1 }, c: { d: { e: 1 } }, f: { g: { h: { i: 1 } } } }`);
c(`{ x: [[[[[[]]]]]] }`);
c(`{ x: [[[[{}]]]] }`);
c(`{ x: { y: { z: { w: {} } } } }`);
c(`{ x: { y: { z: { w: { v: {} } } } } }`);
c(`{ a: [{ b: [{ c: [{ d: 1 }] }] }] }`);
c(`{ veryLongPropertyNameNumberOne: 'value one', veryLongPropertyNameNumberTwo: 'value two' }`);
c(`{ k: ['aaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbbbbb', 'cccccccccccccccccccccccc', 'dddddddddd'] }`);
c(`[{ id: 1, name: 'alpha', tags: ['a', 'b'] }, { id: 2, name: 'beta', tags: [] }, { id: 3, name: 'gamma', tags: ['c'] }]`);
c(`{ users: [{ name: 'a', roles: ['admin', 'user'], meta: { created: new Date(0), active: true } }] }`);
body('frozen and sealed', `return [Object.freeze({ a: 1 }), Object.seal([1])];`);
body('object with numeric-like symbol description', `return [{ [Symbol('1')]: 1 }];`);
body('getter that would throw is not invoked', `return [{ get boom() { throw new Error('must not run'); } }];`);
body('setter only', `const o = {}; Object.defineProperty(o, 'w', { set(v) {}, enumerable: true }); return [o];`);
body('non-enumerable getter hidden', `const o = {}; Object.defineProperty(o, 'g', { get() { return 1; } }); return [o];`);
body('globalThis-like object with many keys', `const o = {}; for (let i = 0; i < 30; i++) o['key' + i] = i; return [o];`);
body('object with 200 keys', `const o = {}; for (let i = 0; i < 200; i++) o['k' + i] = 'v'; return [o];`);

// ---------------------------------------------------------------------------
section('classes');
body('class instance', `class Foo { constructor() { this.a = 1; this.b = 'x'; } } return [new Foo()];`);
body('empty class instance', `class Empty {} return [new Empty()];`);
body('subclass instance', `class A { constructor() { this.a = 1; } } class B extends A { constructor() { super(); this.b = 2; } } return [new B()];`);
body('anonymous class instance', `return [new (class {})(), new (class { constructor() { this.x = 1; } })()];`);
body('class with getter on prototype', `class G { get v() { return 1; } } return [new G()];`);
body('class with toStringTag data', `class T { constructor() { this.x = 1; } } T.prototype[Symbol.toStringTag] = 'Tagged'; return [new T()];`);
body('class with toStringTag equal to name', `class Same {} Same.prototype[Symbol.toStringTag] = 'Same'; return [new Same()];`);
body('class extending Map', `class MyMap extends Map {} return [new MyMap([[1, 2]]), new MyMap()];`);
body('class extending Set', `class MySet extends Set {} return [new MySet([1])];`);
body('class extending Promise', `class MyPromise extends Promise {} return [MyPromise.resolve(1)];`);
body('class extending Date', `class MyDate extends Date {} return [new MyDate(0)];`);
body('class extending RegExp', `class MyRe extends RegExp {} return [new MyRe('a', 'g')];`);
body('class extending Uint8Array', `class MyBytes extends Uint8Array {} return [new MyBytes(2)];`);
body('class named like a builtin', `class Map2 {} return [new Map2()];`);
body('instance with Symbol keys', `class S { constructor() { this[Symbol('k')] = 1; } } return [new S()];`);
body('constructor property overwritten', `function F() { this.a = 1; } F.prototype.constructor = Object; return [new F()];`);
body('function constructor', `function Point(x, y) { this.x = x; this.y = y; } return [new Point(1, 2)];`);
body('constructor without name', `const F = (() => function () { this.a = 1; })(); return [new F()];`);
body('Object.create(proto) with named constructor', `function Base() {} const o = Object.create(Base.prototype); o.z = 1; return [o];`);
body('class instance nested', `class Node2 { constructor(v, next) { this.v = v; this.next = next; } } return [new Node2(1, new Node2(2, new Node2(3, new Node2(4, new Node2(5, null)))))];`);
body('class instance with private fields', `class P { #secret = 1; pub = 2; } return [new P()];`);
body('class static members', `class St { static count = 3; static helper() {} } return [St];`);

// ---------------------------------------------------------------------------
section('depth and circular');
c(`{ l1: { l2: { l3: { l4: { l5: 'x' } } } } }`);
c(`{ l1: { l2: { l3: { l4: [1] } } } }`);
c(`{ l1: { l2: { l3: { l4: { l5: [] } } } } }`);
c(`{ l1: { l2: { l3: { l4: { l5: {} } } } } }`);
c(`{ l1: { l2: { l3: { l4: { l5: new Map([[1, 2]]) } } } } }`);
c(`{ l1: { l2: { l3: { l4: { l5: new Set([1]), l6: new Map() } } } } }`);
c(`[[[[[new Error('deep')]]]]]`);
c(`{ l1: { l2: { l3: { l4: { l5: function f() {}, l6: class K {} } } } } }`);
c(`{ l1: { l2: { l3: { l4: { l5: /re/, d: new Date(0) } } } } }`);
c(`{ l1: { l2: { l3: { l4: { u8: new Uint8Array(2), p: Promise.resolve(1) } } } } }`);
body('deep class instance', `class Deep {} const d = new Deep(); d.x = 1; return [{ a: { b: { c: { d: { e: d } } } } }];`);
body('deep null proto', `const n = Object.create(null); n.x = 1; return [{ a: { b: { c: { d: { e: n } } } } }];`);
body('self array', `const a = [1]; a.push(a); return [a];`);
body('two refs', `const a = { n: 'a' }; const b = { n: 'b', a }; a.b = b; return [a];`);
body('multiple circular refs', `const a = { name: 'a' }; const b = { name: 'b' }; a.b = b; b.a = a; a.self = a; b.self = b; return [{ a, b }];`);
body('circular through map', `const m = new Map(); m.set('self', m); return [m];`);
body('circular through set', `const s = new Set(); s.add(s); return [s];`);
body('circular via array', `const o = { list: [] }; o.list.push(o, o); return [o];`);
body('same object twice is not circular', `const shared = { s: 1 }; return [{ a: shared, b: shared }];`);
body('circular nested deeper', `const root = { child: { grand: {} } }; root.child.grand.root = root; root.child.grand.child = root.child; return [root];`);
body('circular error', `const e = new Error('c'); e.self = e; return [e];`);
body('circular class', `class Cyc { constructor() { this.me = this; } } return [new Cyc()];`);

// ---------------------------------------------------------------------------
section('Map and Set');
c(`new Map(), new Set()`);
c(`new Map([['a', 1], ['b', { c: 2 }], [{ k: 1 }, [1, 2]], [null, undefined]])`);
c(`new Set(['a', 1, { b: 2 }, [3], null])`);
c(`new Map(Array.from({ length: 120 }, (_, i) => [i, i]))`);
c(`new Set(Array.from({ length: 120 }, (_, i) => i))`);
c(`new Map(Array.from({ length: 10 }, (_, i) => ['key' + i, 'value number ' + i]))`);
c(`new Set(Array.from({ length: 30 }, (_, i) => i))`);
c(`{ inner: new Map([[new Map([[1, 2]]), new Set([new Set([3])])]]) }`);
c(`new Map([[1, new Map([[2, new Map([[3, new Map([[4, new Map([[5, 6]])]])]])]])]])`);
c(`new Map([[1, 2]]).entries(), new Map([[1, 2]]).keys(), new Map([[1, 2]]).values()`);
c(`new Set([1, 2]).entries(), new Set([1, 2]).values(), new Set([1, 2]).keys()`);
c(`new Map().entries(), new Set().values()`);
c(`new Map(Array.from({ length: 105 }, (_, i) => [i, 'v'])).entries()`);
c(`new Set(Array.from({ length: 105 }, (_, i) => i)).values()`);
c(`{ it: new Map([['a', { deep: { deeper: 1 } }]]).entries() }`);
body('partially consumed map iterator', `const it = new Map([[1, 'a'], [2, 'b'], [3, 'c']]).entries(); it.next(); return [it];`);
body('partially consumed set iterator', `const it = new Set([1, 2, 3]).values(); it.next(); it.next(); return [it];`);
body('map with extra property', `const m = new Map([[1, 2]]); m.extra = true; return [m];`);
body('set with extra property', `const s = new Set(); s.extra = true; return [s];`);
body('null-prototype map', `const m = new Map([[1, 2]]); Object.setPrototypeOf(m, null); return [m];`);
body('null-prototype set', `const s = new Set([1, 2]); Object.setPrototypeOf(s, null); return [s];`);
body('iterator with extra property', `const it = new Map([[1, 2]]).keys(); it.x = 1; return [it];`);
c(`new WeakMap(), new WeakSet()`);
body('weak collections with entries', `const k = {}; return [new WeakMap([[k, 1]]), new WeakSet([k]), { wm: new WeakMap() }];`);
c(`new Map([[NaN, -0], [-0, NaN]])`);
c(`new Map([['long key number one', 'long value number one'], ['long key number two', 'long value number two']])`);

// ---------------------------------------------------------------------------
section('Date and RegExp');
c(`new Date(0), new Date(1e12), new Date(-1), new Date(8.64e15)`);
c(`new Date(NaN)`);
c(`[new Date(NaN), new Date(0)]`);
body('date with property', `const d = new Date(0); d.note = 'x'; return [d];`);
body('invalid date with property', `const d = new Date(NaN); d.note = 'x'; return [d];`);
body('null-prototype date', `const d = new Date(0); Object.setPrototypeOf(d, null); return [d];`);
c(`/abc/, /a\\/b/gi, /[\\]\\\\]/msuy, new RegExp(''), new RegExp('\\n'), /x/d, /(?<name>y)/v`);
body('regexp with property', `const r = /x/; r.extra = 1; return [r];`);
body('regexp with lastIndex', `const r = /x/g; r.lastIndex = 3; return [r];`);
body('regexp at depth with property', `const r = /x/; r.extra = 1; return [{ a: { b: { c: { d: { e: r } } } } }];`);
body('null-prototype regexp', `const r = /x/g; Object.setPrototypeOf(r, null); return [r];`);
c(`{ re: /x/ }`);

// ---------------------------------------------------------------------------
section('errors');
c(`new Error('plain')`);
c(`new Error('')`);
c(`new Error()`);
c(`new TypeError('bad type'), new RangeError('r'), new SyntaxError('s'), new ReferenceError('ref'), new EvalError('ev'), new URIError('u')`);
c(`new Error('multi\\nline\\nmessage')`);
c(`new Error('with cause', { cause: new Error('the cause') })`);
c(`new Error('primitive cause', { cause: 'just a string' })`);
c(`new Error('undefined cause', { cause: undefined })`);
c(`new Error('cause chain', { cause: new Error('mid', { cause: new Error('root') }) })`);
c(`new AggregateError([new Error('one'), new TypeError('two')], 'many')`);
c(`new AggregateError([], 'none')`);
c(`new AggregateError([1, 'x'], 'prims')`);
body('error with own props', `const e = new Error('props'); e.code = 'E_CODE'; e.status = 500; e.details = { a: [1, 2] }; return [e];`);
body('error with enumerable name/message', `const e = new Error('msg'); e.name = 'CustomName'; return [e];`);
body('error name changed after stack creation', `const e = new Error('msg'); void e.stack; e.name = 'Renamed'; return [e];`);
body('error with name not ending in Error', `const e = new Error('m'); e.name = 'Oops'; return [e];`);
body('error with empty name', `const e = new Error('m'); e.name = ''; return [e];`);
body('class extending Error', `class MyError extends Error {} return [new MyError('mine')];`);
body('class extending Error with name set', `class ValidationError extends Error { constructor(m) { super(m); this.name = 'ValidationError'; } } return [new ValidationError('invalid')];`);
body('class extending Error with name on prototype', `class ProtoNamed extends Error {} ProtoNamed.prototype.name = 'ProtoNamed'; return [new ProtoNamed('p')];`);
body('class extending TypeError', `class MyTypeError extends TypeError {} return [new MyTypeError('t')];`);
body('class extending Error with different name', `class B extends Error { constructor(m) { super(m); this.name = 'ToolCallError'; } } return [new B('nope')];`);
body('error with extra fields class', `class HttpError extends Error { constructor(s) { super('HTTP ' + s); this.name = 'HttpError'; this.status = s; } } return [new HttpError(404)];`);
body('error without stack', `const e = new Error('nostack'); delete e.stack; return [e];`);
body('error with custom stack string', `const e = new Error('x'); e.stack = 'custom stack text'; return [e];`);
body('error with stack that lacks message', `const e = new Error('msg'); e.stack = 'Error: other\\n    at somewhere (file.js:1:1)'; return [e];`);
body('error with empty stack', `const e = new Error('x'); e.stack = ''; return [e];`);
body('error with non-string stack', `const e = new Error('x'); e.stack = 42; return [e];`);
body('error nested in object', `return [{ err: new Error('inner'), ok: 1 }];`);
body('error nested in array', `return [[new Error('in array')]];`);
body('error nested with props', `const e = new Error('inner'); e.code = 1; return [{ e }];`);
body('null-prototype error', `const e = new Error('np'); Object.setPrototypeOf(e, null); return [e];`);
body('error-like object', `return [Object.create(Error.prototype)];`, { oracleRealm: 'main' });
body('error with symbol prop', `const e = new Error('s'); e[Symbol('k')] = 1; return [e];`);
body('error with toStringTag', `const e = new Error('t'); Object.defineProperty(e, Symbol.toStringTag, { value: 'Tag' }); return [e];`);
body('stack trace limit 0', `Error.stackTraceLimit = 0; const e = new Error('no frames'); Error.stackTraceLimit = 10; return [e];`);
body('error thrown and caught', `try { null.x; } catch (e) { return [e]; }`);
body('error thrown from nested function', `function a() { b(); } function b() { throw new Error('nested'); } try { a(); } catch (e) { return [e]; }`);
body('error message containing stack-like line', `return [new Error('has\\n    at fake (x.js:1:1) inside')];`);
body('cause with shared frames', `function mk(m, cause) { return new Error(m, cause === undefined ? undefined : { cause }); } const inner = mk('inner'); return [mk('outer', inner)];`);
body('cause is an object', `return [new Error('c', { cause: { code: 1 } })];`);
body('error with errors property on plain Error', `const e = new Error('x'); e.errors = [1]; return [e];`);
body('error message not a string', `const e = new Error('x'); e.message = 42; return [e];`);
body('error at depth with props', `const e = new Error('d'); e.p = 1; return [{ a: { b: { c: { d: { e } } } } }];`);
body('error at depth without props', `return [{ a: { b: { c: { d: { e: new Error('deep') } } } } }];`);
body('error with cause at depth', `return [{ a: { b: { c: { e: new Error('x', { cause: new Error('y') }) } } } }];`);
body('error subclass with constructor name ending Error and name mismatch', `class DbError extends Error {} const e = new DbError('db'); e.name = 'QueryError'; return [e];`);
body('DOMException-like error name', `const e = new Error('abort'); e.name = 'AbortError'; return [e];`);

// ---------------------------------------------------------------------------
section('functions');
c(`function named() {}, function () {}, () => {}, async () => {}, async function af() {}`);
c(`function* gen() {}, async function* agen() {}, function* () {}`);
c(`class Foo {}, class {}, class Bar extends Object {}`);
body('class extends expression', `function mixin(B) { return class extends B {}; } class Base {} class C2 extends mixin(Base) {} return [C2];`);
body('class with comment before brace', `return [class /* c */ Commented /* ( */ {}];`);
body('class extends call with paren', `const make = () => class {}; return [class X extends (make()) {}];`);
body('bound functions', `function orig() {} return [orig.bind(null), (() => {}).bind(null)];`);
body('function with properties', `function withProps() {} withProps.a = 1; withProps.b = 'two'; return [withProps];`);
body('class with static field', `class HasStatic { static s = 1; } return [HasStatic];`);
body('function with name property changed', `function f() {} Object.defineProperty(f, 'name', { value: 'renamed' }); return [f];`);
body('function with non-string name', `function f() {} Object.defineProperty(f, 'name', { value: 42 }); return [f];`);
body('function with deleted name', `function f() {} delete f.name; return [f];`);
body('null-prototype function', `function f() {} Object.setPrototypeOf(f, null); return [f];`);
body('function with toStringTag', `function f() {} f[Symbol.toStringTag] = 'Tagged'; return [f];`);
body('class with name static method', `class N { static name() {} } return [N];`);
body('method shorthand', `return [{ m() {} }.m, { async m() {} }.m, { *g() {} }.g];`);
body('getter function', `return [Object.getOwnPropertyDescriptor({ get x() { return 1; } }, 'x').get];`);
body('built-in functions', `return [Math.max, Array.prototype.push, Object, Array, Promise, Function.prototype];`);
body('class extends null', `class N extends null {} return [N];`);
body('anonymous class extends', `const Base = class {}; return [class extends Base {}];`);
body('function at depth', `function deepFn() {} deepFn.p = 1; return [{ a: { b: { c: { d: { e: deepFn } } } } }];`);
body('async arrow with props', `const f = async () => {}; f.x = 1; return [f];`);
body('nested functions in object', `return [{ handlers: { onClick() {}, onHover: () => {}, onFocus: function focus() {} } }];`);

// ---------------------------------------------------------------------------
section('boxed primitives');
c(`new Number(3), new Number(-0), new String('x'), new Boolean(false), Object(1n), Object(Symbol('b'))`);
c(`new String(''), new String("it's"), new Number(NaN)`);
body('boxed string with extra prop', `const s = new String('ab'); s.extra = 1; return [s];`);
body('boxed number with extra prop', `const n = new Number(5); n.unit = 'kg'; return [n];`);
body('boxed subclass', `class MyNum extends Number {} return [new MyNum(7)];`);
body('null-prototype boxed', `const b = new Boolean(true); Object.setPrototypeOf(b, null); return [b];`);
c(`[new String('a'.repeat(100))]`);
c(`{ n: new Number(1), s: new String('s') }`);

// ---------------------------------------------------------------------------
section('binary data');
c(`new Uint8Array(0), new Uint8Array(3), new Int32Array([1, -2, 3]), new Float32Array([0.5, 1.1])`);
c(`new Uint8ClampedArray([300, -5]), new Int16Array([-32768]), new Uint32Array([4294967295]), new BigUint64Array([18446744073709551615n])`);
c(`new Uint8Array(150)`);
c(`new Float64Array(Array.from({ length: 30 }, (_, i) => i / 4))`);
c(`new Uint8Array(Array.from({ length: 30 }, (_, i) => i * 8))`);
c(`{ bytes: new Uint8Array([1, 2, 3]) }`);
body('typed array with extra property', `const t = new Uint8Array(2); t.label = 'x'; return [t];`);
body('typed array view with offset', `const b = new ArrayBuffer(8); return [new Uint8Array(b, 2, 3), new Uint16Array(b, 4)];`);
body('null-prototype typed array', `const t = new Uint8Array([1, 2]); Object.setPrototypeOf(t, null); return [t];`);
c(`new ArrayBuffer(0), new ArrayBuffer(2), new Uint8Array([1, 2]).buffer`);
c(`new Uint8Array([0, 15, 16, 255, 128]).buffer`);
c(`new ArrayBuffer(120)`);
c(`{ buf: new ArrayBuffer(4) }`);
body('array buffer with property', `const b = new ArrayBuffer(2); b.tag = 1; return [b];`);
c(`new DataView(new ArrayBuffer(4)), new DataView(new ArrayBuffer(8), 2, 4)`);
body('dataview with property', `const d = new DataView(new ArrayBuffer(1)); d.x = 1; return [d];`);
c(`new SharedArrayBuffer(3)`);
body('detached array buffer', `const b = new ArrayBuffer(4); __detach(b); return [b, { b }];`);
c(`[new Uint8Array(2), new Uint8Array(2)]`);

// ---------------------------------------------------------------------------
section('promises');
c(`Promise.resolve(), Promise.resolve(undefined), Promise.resolve(null)`);
c(`Promise.resolve({ a: { b: { c: { d: 1 } } } })`);
c(`Promise.resolve(Promise.resolve(1))`);
body('promise resolved with array', `return [Promise.resolve([1, 2, 3])];`);
body('promise with extra prop', `const p = Promise.resolve(1); p.extra = 2; return [p];`);
body('nested promise in object', `return [{ p: new Promise(() => {}) }];`);
body('rejected with error nested', `const p = Promise.reject(new TypeError('t')); p.catch(() => {}); return [{ p }];`);
body('async function result', `const f = async () => 5; return [f()];`);
body('promise resolved with long string', `return [Promise.resolve('s'.repeat(100))];`);

// ---------------------------------------------------------------------------
section('proxies');
c(`new Proxy({ a: 1 }, {})`);
c(`new Proxy([1, 2, 3], {})`);
body('proxy traps are not run', `const p = new Proxy({ a: 1 }, { get() { throw new Error('get trap'); }, ownKeys() { throw new Error('ownKeys trap'); }, getOwnPropertyDescriptor() { throw new Error('gopd trap'); }, getPrototypeOf() { throw new Error('proto trap'); } }); return [p];`);
body('proxy of function', `return [new Proxy(function target() {}, {})];`);
body('proxy of class', `return [new Proxy(class K {}, {})];`);
body('proxy of map', `return [new Proxy(new Map([[1, 2]]), {})];`);
body('revoked proxy', `const r = Proxy.revocable({}, {}); r.revoke(); return [r.proxy];`);
body('proxy nested in object', `return [{ p: new Proxy({ inner: true }, {}) }];`);
body('proxy of error', `return [new Proxy(new Error('pe'), {})];`);
body('proxy of proxy', `return [new Proxy(new Proxy({ x: 1 }, {}), {})];`);
body('proxy in array circular', `const t = { a: 1 }; const p = new Proxy(t, {}); t.self = p; return [p];`);

// ---------------------------------------------------------------------------
section('misc objects');
c(`Math, JSON, Reflect, globalThis.Atomics ?? null`);
c(`Object.prototype, Function.prototype, Array.prototype`);
c(`(function () { return arguments; })(1, 'two')`);
c(`(function () { return arguments; })()`);
c(`(function* () { yield 1; })(), (async function* () {})()`);
c(`[1, 2][Symbol.iterator](), 'ab'[Symbol.iterator](), new Map().entries()[Symbol.iterator]()`);
c(`Symbol.prototype, Number.prototype, String.prototype, Boolean.prototype`);
c(`Map.prototype, Set.prototype, Promise.prototype, Date.prototype, RegExp.prototype`);
c(`Error.prototype, TypeError.prototype`, { oracleRealm: 'main' });
c(`new (class extends null { constructor() { return Object.create(new.target.prototype); } })()`);
c(`new WeakRef({})`);
c(`Object(Symbol.iterator)`);

// ---------------------------------------------------------------------------
section('format specifiers');
c(`'%s', 'str'`);
c(`'%s', 42`);
c(`'%s', -0`);
c(`'%s', 42n`);
c(`'%s', null, undefined`);
c(`'%s %s', true, Symbol('sym')`);
c(`'%s', { a: { b: { c: 1 } } }`);
c(`'%s', [1, [2, [3]]]`);
c(`'%s', new Map([[1, { a: 1 }]])`);
c(`'%s', new Error('in %s')`);
c(`'%s', function fn() { return 1; }`);
c(`'%s', class K {}`);
c(`'%s', { toString() { return 'custom toString'; } }`);
c(`'%s', new (class Custom { toString() { return 'from class'; } })()`);
c(`'%s', new (class NoCustom {})()`);
c(`'%s', new Date(0)`);
c(`'%s', Object.create(null)`);
c(`'%s', { [Symbol.toPrimitive]() { return 'prim'; } }`);
c(`'%s', new (class extends Date {})(0)`);
c(`'%d', 42`);
c(`'%d', '42'`);
c(`'%d', '0x10'`);
c(`'%d', 1.5`);
c(`'%d', -0`);
c(`'%d', 10n`);
c(`'%d', Symbol('x')`);
c(`'%d', {}`);
c(`'%d', []`);
c(`'%d', null`);
c(`'%d', undefined`);
c(`'%d', { valueOf() { return 7; } }`);
c(`'%i', 42.9`);
c(`'%i', '42.9abc'`);
c(`'%i', -0.5`);
c(`'%i', 10n`);
c(`'%i', Symbol()`);
c(`'%i', 1e21`);
c(`'%f', '1.5e3'`);
c(`'%f', 'abc'`);
c(`'%f', Symbol()`);
c(`'%f', 10n`);
c(`'%f', -0`);
c(`'%j', { a: [1, 'two'], b: null }`);
c(`'%j', 'str'`);
c(`'%j', undefined`);
c(`'%j', { toJSON() { return 'custom json'; } }`);
body('%j circular', `const o = {}; o.o = o; return ['%j', o];`);
c(`'%o', { a: 1, b: [1, 2] }`);
c(`'%o', [1, 2, 3]`);
c(`'%o', function foo() {}`);
c(`'%o', new Map([[1, 2]])`);
c(`'%o', new Proxy({ a: 1 }, {})`);
c(`'%o', 'a string'`);
c(`'%o', { a: { b: { c: { d: { e: { f: 1 } } } } } }`);
c(`'%o', new Uint8Array(2)`);
c(`'%o', new (class WithGetter { get g() { return 1; } })()`);
c(`'%o', new Error('o err')`);
c(`'%o', new WeakSet()`);
c(`'%o', [new Set([1])]`);
c(`'%O', { a: { b: { c: { d: { e: { f: 1 } } } } } }`);
c(`'%O', 'quoted?'`);
c(`'%c styled %c', 'color: red', 'font-weight: bold'`);
c(`'100%% sure', 1`);
c(`'100%% sure'`);
c(`'%%s %s', 'x'`);
c(`'%s'`);
c(`'%s %s', 'only one'`);
c(`'%x %s', 'a'`);
c(`'%', 1`);
c(`'trailing %', 1`);
c(`'%s%s%s', 1, 2, 3`);
c(`'no specifiers', { a: 1 }, 'str', 5`);
c(`'%s:%d', 'a', 1, { extra: true }, 'tail'`);
c(`{ first: 'object' }, '%s', 'not a format'`);
c(`5, '%d', 6`);
c(`'%s', 'a\\nb', ['c\\nd']`);
c(`'%%', 1`);
c(`'%%%s', 'x'`);
c(`'%s %o', 'a', 'b'`);
c(`'%s', new Proxy({ a: 1 }, {})`);
c(`'%s', new Proxy([1], {})`);
c(`'%s', Promise.resolve(2)`);
c(`'%s', new (class Tagged { get [Symbol.toStringTag]() { return 'T'; } })()`, {
  knownDifference: { reason: 'Symbol.toStringTag getters are never invoked (Node calls them)', ours: 'Tagged {}' },
});
c(`'%d %i %f', '', ' 12 ', '\\n'`);

// ---------------------------------------------------------------------------
section('console methods');
con('log info debug warn error', `console.log('plain', { a: 1 }); console.info('i'); console.warn('w'); console.error('e'); console.debug('d');`,
  { expected: ['plain { a: 1 }', 'i', 'w', 'e', 'd'] });
con('unbound log', `const log = console.log; log('x'); const err = console.error; err('%d', 5);`, { expected: ['x', '5'] });
con('log with no args', `console.log(); console.error();`, { expected: ['', ''] });
con('dir', `console.dir({ a: { b: { c: { d: { e: { f: 1 } } } } } }); console.dir('str'); console.dir([1, 2], { depth: 0 });`);
con('dir options', `console.dir({ a: { b: { c: {} } } }, { depth: 0 }); console.dir({ a: { b: { c: { d: 1 } } } }, { depth: null }); console.dir({ b: 2, a: 1, c: [3, 1, 2] }, { sorted: true }); console.dir([1, 2, 3, 4], { maxArrayLength: 2 }); console.dir('x'.repeat(20), { maxStringLength: 5 }); console.dir({ a: 1 }, { compact: false }); console.dir({ a: { b: 1 } }, { compact: true }); console.dir({ a: [1, 2, { b: 1 }] }, { breakLength: 10 });`);
con('dir showHidden', `console.dir([1, 2], { showHidden: true }); console.dir({ get x() { return 1; } }, { getters: true }); console.dir(1234567.891, { numericSeparator: true }); console.dir(new Proxy({}, {}), { showProxy: true });`);
con('dir colors', `console.dir({ a: 1, b: 'x', c: null, d: undefined, e: [true], f: Symbol('s'), g: 1n, h: new Date(0), i: /r/ }, { colors: true });`);
con('dir colors grouped', `console.dir(Array.from({ length: 20 }, (_, i) => i), { colors: true }); console.dir(Array.from({ length: 20 }, (_, i) => 'x' + i), { colors: true });`);
con('dirxml', `console.dirxml({ a: 1 }, 'two');`);
con('group', `console.log('top'); console.group('Group A'); console.log('inside'); console.group(); console.log({ a: 1, b: { c: [1, 2, 3] } }); console.log('multi\\nline'); console.groupEnd(); console.warn('back one'); console.groupEnd(); console.groupEnd(); console.log('top again');`);
con('groupCollapsed', `console.groupCollapsed('collapsed %d', 1); console.error(new Error('in group').message); console.groupEnd();`);
con('group indents objects and errors', `console.group(); console.log({ deep: { a: [1, 2, 3], b: 'x'.repeat(70) } }); console.dir(new Map([[1, { a: 1 }]])); console.groupEnd();`);
con('count', `console.count(); console.count(); console.count('x'); console.count('x'); console.countReset('x'); console.count('x'); console.countReset('missing'); console.count(1); console.countReset(1); console.count('1');`);
con('assert', `console.assert(true, 'not printed'); console.assert(false); console.assert(0, 'message %s', 'formatted'); console.assert('', { obj: 1 }); console.assert(null, 'a', 'b');`);
con('assert with object first', `console.assert(false, { a: 1 }, 2);`);
con('time', `console.time(); advance(1.5); console.timeLog(); advance(1000); console.timeLog(undefined, 'extra', { a: 1 }); advance(60000); console.timeEnd(); console.timeEnd();`);
con('time labels', `console.time('a'); console.time('a'); advance(0.25); console.timeEnd('a'); console.timeLog('nope'); console.time('h'); advance(3723004.5); console.timeEnd('h'); console.time(5); advance(12.3456); console.timeEnd(5);`);
con('table of objects', `console.table([{ a: 1, b: 'x' }, { a: 2, c: true }]);`);
con('table of arrays', `console.table([[1, 2], [3, 4, 5]]);`);
con('table of primitives', `console.table(['a', 'b', 1]);`);
con('table mixed', `console.table([{ a: 1 }, 'prim', [2]]);`);
con('table of object of objects', `console.table({ r1: { c1: 1, c2: 2 }, r2: { c2: 3, c3: 4 } });`);
con('table with properties', `console.table([{ a: 1, b: 2, c: 3 }, { a: 4, b: 5 }], ['a', 'c']); console.table(['x', 'y'], ['length']);`);
con('table of map and set', `console.table(new Map([['k1', { v: 1 }], ['k2', 2]])); console.table(new Set(['a', { b: 1 }]));`);
con('table of iterators', `console.table(new Map([[1, 2]]).entries()); console.table(new Map([[1, 2]]).keys()); console.table(new Set([3]).values());`);
con('table non-object', `console.table(5); console.table('str'); console.table(null); console.table(() => 1);`);
con('table nested values', `console.table([{ obj: { a: { b: 1 } }, arr: [1, 2, 3, 4, 5], str: 'text', n: null, u: undefined }]);`);
con('table unicode', `console.table([{ name: '日本語', emoji: '👍', plain: 'abc' }]);`);
con('table empty', `console.table([]); console.table({});`);
con('table in group', `console.group('g'); console.table([{ a: 1 }]); console.groupEnd();`);
con('trace', `console.trace(); console.trace('message %s', 'formatted', { a: 1 });`);
con('trace from nested function', `function inner() { console.trace('deep'); } function outer() { inner(); } outer();`);
con('trace in group', `console.group(); console.trace('grouped'); console.groupEnd();`);
con('methods keep working after console properties are replaced', `const log = console.log; console.log = null; log('still works');`, { expected: ['still works'] });


// ---------------------------------------------------------------------------
section('inspect options via console.dir');
const dirCases = [
  ['{ a: { b: { c: {} } } }', '{ depth: 0 }'],
  ['[[1, [2, [3]]]]', '{ depth: 1 }'],
  ['{ a: { b: 1 } }', '{ depth: -1 }'],
  ['[1, { a: 1 }]', '{ depth: -1 }'],
  ['{ a: { b: { c: { d: { e: { f: { g: 1 } } } } } } }', '{ depth: Infinity }'],
  ['{ a: { b: { c: { d: { e: { f: { g: 1 } } } } } } }', '{ depth: null }'],
  ['{ a: { b: { c: 1 } } }', '{ depth: undefined }'],
  ['Array.from({ length: 10 }, (_, i) => i)', '{ maxArrayLength: 0 }'],
  ['Array.from({ length: 10 }, (_, i) => i)', '{ maxArrayLength: 1 }'],
  ['Array.from({ length: 10 }, (_, i) => i)', '{ maxArrayLength: -1 }'],
  ['Array.from({ length: 10 }, (_, i) => i)', '{ maxArrayLength: null }'],
  ['new Set([1, 2, 3])', '{ maxArrayLength: 1 }'],
  ['new Map([[1, 2], [3, 4]])', '{ maxArrayLength: 1 }'],
  ['new Uint8Array(5)', '{ maxArrayLength: 2 }'],
  ['new ArrayBuffer(5)', '{ maxArrayLength: 2 }'],
  ['new Map([[1, 2], [3, 4]]).entries()', '{ maxArrayLength: 1 }'],
  ['[, , 1, , ]', '{ maxArrayLength: 2 }'],
  ["['abcdef', 'x']", '{ maxStringLength: 3 }'],
  ["['abcdef']", '{ maxStringLength: 0 }'],
  ["{ s: 'abc' }", '{ maxStringLength: null }'],
  ['{ a: 1, b: [1, 2, { c: 3 }], d: new Map([[1, { e: 2 }]]) }', '{ compact: false }'],
  ['[[1, 2], { a: 1 }, "str"]', '{ compact: false }'],
  ["'a'.repeat(100)", '{ compact: false }'],
  ['{ a: 1, b: [1, 2, { c: 3 }], d: new Map([[1, { e: 2 }]]) }', '{ compact: true }'],
  ["{ longer: 'x'.repeat(90), n: [1, 2, 3] }", '{ compact: true }'],
  ["{ a: { b: { c: 'x'.repeat(30) } }, list: Array.from({ length: 30 }, (_, i) => i) }", '{ compact: true }'],
  ["['x\\ny'.repeat(20)]", '{ compact: true }'],
  ['{ a: { b: { c: 1 } }, d: [1, 2] }', '{ compact: 1 }'],
  ['{ a: { b: { c: 1 } }, d: [1, 2] }', '{ compact: 0 }'],
  ['Array.from({ length: 30 }, (_, i) => i)', '{ compact: 1 }'],
  ['Array.from({ length: 30 }, (_, i) => i)', '{ compact: false }'],
  ['{ a: 1, b: { c: 2 } }', '{ breakLength: Infinity }'],
  ['Array.from({ length: 40 }, (_, i) => "item" + i)', '{ breakLength: Infinity }'],
  ['{ a: 1, b: 2 }', '{ breakLength: 0 }'],
  ['Array.from({ length: 30 }, (_, i) => i)', '{ breakLength: 40 }'],
  ['{ c: 3, a: 1, b: 2, [Symbol("s")]: 0 }', '{ sorted: true }'],
  ['new Map([["b", 1], ["a", 2]])', '{ sorted: true }'],
  ['new Set(["b", "a", "c"])', '{ sorted: true }'],
  ['Object.assign([3, 1, 2], { z: 1, y: 2 })', '{ sorted: true }'],
  ['{ b: 1, a: 2, c: 3 }', '{ sorted: (x, y) => (x < y ? 1 : x > y ? -1 : 0) }'],
  ['{ get a() { return 1; }, get o() { return { x: [1] }; }, get n() { return null; }, set s(v) {}, get gs() { return "v"; }, set gs(v) {} }', '{ getters: true }'],
  ['{ get a() { return 1; }, get gs() { return 2; }, set gs(v) {} }', "{ getters: 'get' }"],
  ['{ get a() { return 1; }, get gs() { return 2; }, set gs(v) {} }', "{ getters: 'set' }"],
  // (The thrown error's stack is fixed: Node 24+ inspects what the getter threw, and its real stack
  // would name each world's own formatting frames.)
  ["{ get boom() { const e = new Error('bad getter'); e.stack = 'Error: bad getter\\n    at get boom (getter.js:1:1)'; throw e; } }", '{ getters: true }'],
  ["{ get boom() { throw 'a string'; }, get fn() { return function f() {}; } }", '{ getters: true }'],
  ['[1234567, -1234567.891, 0.0001234, 1e21, 12345678901234567890n, -0, 123]', '{ numericSeparator: true }'],
  ['new Float64Array([1234.5678, 1e6])', '{ numericSeparator: true }'],
  ['[1, 2, [3, [4]], { a: [] }]', '{ showHidden: true }'],
  ['{ a: 1 }', '{ showHidden: true }'],
  ['new Map([[1, 2]])', '{ showHidden: true }'],
  ['new Set([1])', '{ showHidden: true }'],
  ['new Uint8Array([1, 2])', '{ showHidden: true }'],
  ['new ArrayBuffer(3)', '{ showHidden: true }'],
  ['new DataView(new ArrayBuffer(2))', '{ showHidden: true }'],
  ['Promise.resolve(3)', '{ showHidden: true }'],
  ["new Error('hidden')", '{ showHidden: true }'],
  ['function named(a, b) {}', '{ showHidden: true }'],
  ['class Shown { constructor() { this.x = 1; } get y() { return 2; } m() {} }', '{ showHidden: true }'],
  ['new (class Shown { constructor() { this.x = 1; } get y() { return 2; } m() {} static s = 1; })()', '{ showHidden: true }'],
  ['new (class Sub extends (class Base { get b() { return 1; } }) { get s() { return 2; } })()', '{ showHidden: true }'],
  ['Object.create({ inherited: 1, get g() { return 2; } })', '{ showHidden: true }'],
  ["Object.defineProperty({ v: 1 }, 'h', { value: 'hidden', enumerable: false })", '{ showHidden: true }'],
  ["Object.defineProperty({}, Symbol.toStringTag, { value: 'TagH' })", '{ showHidden: true }'],
  ['new String("ab")', '{ showHidden: true }'],
  ['new Proxy({ a: 1 }, { get() { return 1; } })', '{ showProxy: true }'],
  ['new Proxy([1, 2], {})', '{ showProxy: true, depth: 0 }'],
  ['{ p: new Proxy({}, {}) }', '{ showProxy: true, depth: 0 }'],
  ['(() => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy; })()', '{ showProxy: true }'],
  ["{ a: 1, b: 'str', c: [null, undefined, true, 1n, Symbol('s')], d: new Date(0), e: /re/g, f: function f() {}, g: new Map([[1, 2]]) }", '{ colors: true }'],
  ["{ long: ['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbb', 'ccccccccccccccccc', 'dddddddddddd', 'eeeeeeeeee'] }", '{ colors: true }'],
  ["[new Error('colored'), Promise.resolve(1), new WeakMap(), [ , 1]]", '{ colors: true }'],
  ['[new Number(1), new String("s"), Object(1n), Object(Symbol("q")), new Boolean(true)]', '{ colors: true }'],
  ["(() => { const o = { k: 1 }; o.self = o; return o; })()", '{ colors: true }'],
  ['{ a: 1 }', '{ customInspect: false, unknownOption: 1 }'],
  ['{ a: 1 }', 'null'],
  ['{ a: 1 }', "'string options'"],
  ['new Map([[{ a: 1 }, new Set([[1, 2]])]])', '{ showHidden: true, depth: 0 }'],
];
for (const [value, options] of dirCases) {
  // With colors, Node greys the cwd part of stack frames; isolate frames are
  // program.ts only (no cwd), so keep error stacks to the program frame.
  const extra = options.includes('colors') ? { stackTraceLimit: 1 } : undefined;
  con(`dir ${value.length > 50 ? value.slice(0, 47) + '...' : value} ${options}`, `console.dir(${value}, ${options});`, extra);
}
con('dir weak collections with showHidden', `const k1 = { k: 1 }; const k2 = { k: 2 }; const wm = new WeakMap([[k1, 'a'], [k2, 'b']]); const ws = new WeakSet([k1, k2]); console.dir(wm, { showHidden: true }); console.dir(ws, { showHidden: true }); console.log('%o', { wm }); return [k1, k2];`);

section('%o in depth');
c(`'%o', class A { static x = 1; }`);
c(`'%o', { f() {}, arrow: () => 1 }`);
c(`'%o', Object.create(null)`);
c(`'%o', [new Map([[{ a: 1 }, [1]]])]`);
c(`'%o', new Uint8Array([1, 2, 3]).buffer`);
c(`'%o', (function () { return arguments; })(1)`);
c(`'%o', Math.max`);
c(`'%o', Symbol('s')`);
c(`'%o', [[[[[[1]]]]]]`);
c(`'%o', new Set([1, 2]).values()`);
c(`'%o', new Date(0)`);
c(`'%o', /re/g`);
c(`'%o', new Number(3)`);
c(`'%o %O', { a: [1] }, { b: [2] }`);


// ---------------------------------------------------------------------------
section('runtime custom inspectors');
// In our world the "runtime" defines a URL-like class and registers Node's URL
// inspection protocol for it; the oracle uses Node's real URL (main realm).
const URL_PORT = String.raw`
  if (typeof __defineCustomInspect !== 'function') return (s) => new URL(s);
  const PortedURL = class URL {
    #u;
    constructor(s) { this.#u = s; }
    get parts() { return { href: this.#u }; }
  };
  class Params { constructor(q) { this.q = q; } }
  __defineCustomInspect(PortedURL.prototype, function (depth, opts, inspect) {
    if (typeof depth === 'number' && depth < 0) return this;
    const obj = { __proto__: { constructor: PortedURL } };
    const m = /^(\w+:)\/\/([^/:?#]+)(:\d+)?(\/[^?#]*)?(\?[^#]*)?(#.*)?$/.exec(this.parts.href);
    obj.href = m[1] + '//' + m[2] + (m[3] || '') + (m[4] || '/') + (m[5] || '') + (m[6] || '');
    obj.origin = m[1] + '//' + m[2] + (m[3] || '');
    obj.protocol = m[1]; obj.username = ''; obj.password = '';
    obj.host = m[2] + (m[3] || ''); obj.hostname = m[2]; obj.port = (m[3] || '').slice(1);
    obj.pathname = m[4] || '/'; obj.search = m[5] || '';
    obj.searchParams = new Params(m[5] || '');
    obj.hash = m[6] || '';
    return 'URL ' + inspect(obj, opts);
  });
  __defineCustomInspect(Params.prototype, function (depth, opts, inspect) {
    const pairs = this.q.slice(1).split('&').filter(Boolean).map((p) => p.split('='));
    if (pairs.length === 0) return 'URLSearchParams {}';
    const out = pairs.map(([k, v]) => inspect(k, opts) + ' => ' + inspect(v, opts));
    return 'URLSearchParams { ' + out.join(', ') + ' }';
  });
  return (s) => new PortedURL(s);
`;
// (The ported inspector itself is ordinary runtime code, not program-proof,
// so these cases are left out of the mutation pass.)
body('URL via runtime custom inspector', `const make = (() => {${URL_PORT}})(); return [make('https://ex.com/a?b=1#h')];`, { oracleRealm: 'main', noMutation: true });
body('URL nested via runtime custom inspector', `const make = (() => {${URL_PORT}})(); return ['got', { u: make('http://x:8080'), list: [make('http://y')] }];`, { oracleRealm: 'main', noMutation: true });
body('URL beyond depth via runtime custom inspector', `const make = (() => {${URL_PORT}})(); return [{ a: { b: { c: { d: { e: make('http://z') } } } } }];`, { oracleRealm: 'main', noMutation: true });


// ---------------------------------------------------------------------------
section('program code during formatting');
con('re-entrant log from a %s toString', `console.log('%s and %s', { toString() { console.log('inner'); return 'outer'; } }, 'x');`);
con('re-entrant log from %j toJSON', `console.log('%j', { toJSON() { console.log('inner %o', [1]); return { j: 1 }; } });`);
con('throwing toString propagates to the program', `try { console.log('%s', { toString() { throw new Error('boom'); } }); } catch (e) { console.log('caught', e.message); } console.log('next');`);
con('%j with BigInt throws', `try { console.log('%j', { n: 1n }); } catch (e) { console.log(e.name, e.message); }`);
con('%d with throwing valueOf', `try { console.log('%d', { valueOf() { throw new RangeError('vo'); } }); } catch (e) { console.log(e.name, e.message); }`);
con('%d %i %f with objects', `console.log('%d %i %f', { valueOf() { return 7; } }, { toString() { return '42.5'; } }, [3.25]); console.log('%d %d %d', [], [5], new Date(5)); console.log('%i %f', new Number(9.9), new String('1e2'));`);
con('%s with Symbol.toPrimitive and class toString', `class T { toString() { return 'T!'; } } class P { [Symbol.toPrimitive](h) { return 'prim:' + h; } } console.log('%s %s %s', new T(), new P(), Object.assign(() => {}, { toString() { return 'fn!'; } }));`);
con('%s with function with user toString', `function f() {} f.toString = () => 'custom fn'; class K { static toString() { return 'static K'; } } console.log('%s|%s', f, K);`);
con('count and time with Symbol label throw', `for (const m of ['count', 'time', 'timeEnd', 'timeLog']) { try { console[m](Symbol('s')); } catch (e) { console.log(m, e.name, e.message); } }`);
con('labels use toString', `console.count({ toString() { return 'objlabel'; } }); console.count(['a', 'b']); console.count(null); console.time({ toString() { return 'T'; } }); console.timeEnd('T');`);
con('assert message conversion', `console.assert(false, ['x', 'y']); console.assert(false, { toString() { return 'custom'; } }, 'more'); try { console.assert(false, Symbol('s')); } catch (e) { console.log(e.name); }`);
con('table with invalid properties', `try { console.table([{ a: 1 }], 'a'); } catch (e) { console.log(e.name, e.code, e.message); console.log(e.stack.split('\\n')[0]); } try { console.table([], { length: 1 }); } catch (e) { console.log(e.message); } try { console.table([], 5); } catch (e) { console.log(e.message); }`);
con('program code Node runs but we do not', `let calls = 0;
const hit = () => { calls++; };
class Tagged { get [Symbol.toStringTag]() { hit(); return 'T'; } }
class Custom { [Symbol.for('nodejs.util.inspect.custom')]() { hit(); return 'custom!'; } }
class HasInst { static [Symbol.hasInstance](x) { hit(); return true; } }
class Href { get href() { hit(); return 'h'; } }
class NamedGetter { static get name() { hit(); return 'NG'; } }
class ErrGetters extends Error { get cause() { hit(); return 'c'; } }
const trapped = new Proxy({}, { get() { hit(); }, getOwnPropertyDescriptor() { hit(); }, getPrototypeOf() { hit(); return null; }, has() { hit(); return false; }, ownKeys() { hit(); return []; } });
const behindProxy = Object.create(trapped);
console.log([new Tagged(), new Custom(), new HasInst(), new Href(), new NamedGetter(), behindProxy]);
console.log(Object.keys(new ErrGetters('e')).length, 'getters ran: %d', calls);`, {
  knownDifference: {
    reason: 'Node invokes Symbol.toStringTag getters, util.inspect.custom methods, Symbol.hasInstance, a class\'s `href` getter and static `name` getter, and Proxy traps of prototypes; we never run them',
    ours: ['[ Tagged {}, Custom {}, HasInst {}, Href {}, NamedGetter {}, {} ]', '0 getters ran: %d 0'],
  },
});


// ---------------------------------------------------------------------------
section('escaping and multi-line edge cases');
c(`{ '\\ud800': 1, 'a\\udc00': 2, [Symbol('\\ud83d')]: 3, [Symbol('\\x00\\n')]: 4 }`);
c(`new Map([["it's", 'say "hi"'], ['k\\n', 'v\\t']])`);
c(`new Map([['key', 'first line of a long value\\nsecond line of a long value that keeps going and going']])`);
c(`new Set(['a long string value with a newline in the middle\\nand a long second line that goes past eighty'])`);
c(`Array.from({ length: 8 }, (_, i) => 'line ' + i + ' is long enough to be split\\nsecond part of entry ' + i)`);
c(`[['nested', ['deeper string that is long enough\\nto be split when the indentation grows large']]]`);
c(`{ a: { b: { c: 'at depth three a long line that is split\\nhere and continues with more text' } } }`);
c(`Array.from({ length: 10 }, (_, i) => '\\x1b[31mred\\x1b[39m' + i)`);
c(`'%s', '\\x1b[31mred\\x1b[39m'`);
c(`['tab\\tin\\tarray', 'ctrl\\x01', 'del\\x7f', 'zero\\u200bwidth', 'combining e\\u0301']`);
c(`Array.from({ length: 12 }, (_, i) => 'e\\u0301'.repeat(i % 4 + 1))`);
c(`Array.from({ length: 12 }, (_, i) => '漢字'.repeat(i % 3 + 1))`);
c(`Array.from({ length: 9 }, (_, i) => ['👨‍👩‍👧', '🏳️‍🌈', 'ｆｕｌｌ', 'ﾊﾝｶｸ', '\\u00ad'][i % 5])`);
c(`{ 'key\\u2028sep': 1, 'k\\u0085': 2 }`);
c(`[Symbol('a'), Symbol.for('b'), Symbol()]`);
c(`{ [Symbol()]: 1, [Symbol('')]: 2 }`);

// ---------------------------------------------------------------------------
// Where util.inspect changed between the Node majors the runtime follows (20, 22, 24, 26; see
// src/isolate/js/console/README.md): each case runs against the Node the suite runs under.
section('node majors');
// ArrayBuffer / DataView / typed array entries ("[byteLength]: 2" from 22).
c(`new ArrayBuffer(2), new SharedArrayBuffer(1), new DataView(new ArrayBuffer(4), 1, 2)`);
c(`Object.assign(new ArrayBuffer(1), { own: 1, [Symbol('s')]: 2 })`);
body('detached data view', `const b = new ArrayBuffer(4); const v = new DataView(b, 1, 2); __detach(b); try { return [v]; } catch (e) { return [String(e.name)]; }`, { noMutation: true });
con('typed array extras with colors', `console.dir(new Uint16Array([1, 2]), { showHidden: true, colors: true }); console.dir(new DataView(new ArrayBuffer(1)), { colors: true });`);
con('typed array extras and own keys with showHidden', `console.dir(Object.assign(new Uint8Array(2), { extra: 1 }), { showHidden: true, maxArrayLength: 1 });`);
con('array buffer extras compact true', `console.dir({ b: new ArrayBuffer(30), v: new DataView(new ArrayBuffer(2)) }, { compact: true, breakLength: 40 });`);
// Symbol and hidden keys ("Symbol(s): 4" from 24).
c(`{ [Symbol('s')]: 4, [Symbol.for('f')]: 5, [Symbol('a b')]: 6 }`);
con('hidden keys', `console.dir(Object.defineProperties({}, { 'a-b': { value: 1 }, plain: { value: 2 }, [Symbol('h')]: { value: 3 }, __proto__: { value: 4, enumerable: false }, "it's": { value: 5 }, 'x\\ny': { value: 6 } }), { showHidden: true });`);
c(`Object.defineProperty({ ['__proto__']: 1 }, Symbol('e\\n'), { value: 2, enumerable: true })`);
con('symbol keys sorted and colored', `console.dir({ b: 1, [Symbol('a')]: 2 }, { sorted: true, colors: true });`);
// The constructor / Symbol.toStringTag label.
body('subclass names containing the tag', `class MyMap extends Map {} class Mapper extends Map {} class MapX extends Map {} class Map2 extends Map {} class MySet extends Set {} class Settings extends Set {} return [new MyMap(), new Mapper([[1, 2]]), new MapX(), new Map2(), new MySet([1]), new Settings()];`);
body('tag naming the constructor after a dot', `class Foo { get [Symbol.toStringTag]() { return 'x'; } } Object.defineProperty(Foo.prototype, Symbol.toStringTag, { value: 'ns.Foo' }); class Bar {} Object.defineProperty(Bar.prototype, Symbol.toStringTag, { value: 'Bar' }); class Baz {} Object.defineProperty(Baz.prototype, Symbol.toStringTag, { value: '.Baz' }); return [new Foo(), new Bar(), new Baz()];`);
body('tag on typed array and promise subclasses', `class Bytes extends Uint8Array {} class MyPromise extends Promise {} class Later extends Promise {} return [new Bytes(2), MyPromise.resolve(1), Later.resolve(2)];`);
body('throwing Symbol.toStringTag getter', `class Thrower { get [Symbol.toStringTag]() { throw new Error('tag'); } } return [new Thrower(), [new Thrower()]];`, {
  knownDifference: {
    majors: [20, 22],
    reason: 'Node 20 and 22 call the getter and its error escapes (24+ ignore it); getters are never invoked here',
    ours: 'Thrower {} [ Thrower {} ]',
  },
});
// Proxies ("Proxy({ a: 1 })" in 26).
body('revoked and nested proxies', `const r = Proxy.revocable({}, {}); r.revoke(); const inner = new Proxy({ x: 1 }, {}); return [r.proxy, new Proxy(new Proxy(inner, {}), {}), [inner, inner]];`);
body('proxy of a revoked proxy', `const r = Proxy.revocable({}, {}); r.revoke(); return [new Proxy(r.proxy, {}), [new Proxy(r.proxy, {})]];`, {
  knownDifference: {
    majors: [20, 22, 24],
    reason: 'before 26 Node unwraps one proxy and inspects the revoked one through its traps, which throw; traps never run here',
    ours: '<Revoked Proxy> [ <Revoked Proxy> ]',
  },
});
body('proxies in collections', `const p = new Proxy([1, 2], {}); return [new Map([[p, new Proxy(new Set([1]), {})]]), { p, q: new Proxy(function named() {}, {}) }];`);
body('circular through a proxy', `const o = { a: 1 }; const p = new Proxy(o, {}); o.p = p; return [p, o];`);
c(`'%s|%s|%d', new Proxy({ a: 1 }, {}), new Proxy(new Proxy([1], {}), {}), new Proxy({}, {})`);
c(`'%o', new Proxy({ a: 1 }, {})`);
con('proxies with colors and depth', `console.dir({ a: { b: new Proxy({ c: 1 }, {}) } }, { colors: true, depth: 0 }); console.dir(new Proxy(new Proxy({ c: 1 }, {}), {}), { colors: true });`);
// Errors.
body('error with inherited and own cause', `const proto = Object.create(Error.prototype, { cause: { value: 'inherited', enumerable: false } }); const e = new Error('x'); Object.setPrototypeOf(e, proto); e.stack = 'Error: x\\n    at f (a.js:1:1)'; const f = new Error('y', { cause: 1 }); f.stack = 'Error: y\\n    at g (a.js:1:1)'; return [e, f];`);
body('error with inherited errors array', `const e = new Error('x'); e.stack = 'Error: x\\n    at f (a.js:1:1)'; Object.setPrototypeOf(e, Object.create(Error.prototype, { errors: { value: [1] } })); const a = new AggregateError([1, 2], 'agg'); a.stack = 'AggregateError: agg\\n    at f (a.js:1:1)'; return [e, a];`);
body('error with own stack, message and name keys', `const e = new Error('m'); Object.defineProperty(e, 'stack', { value: 'Error: m\\n    at f (a.js:1:1)', enumerable: true }); e.message = 'other'; e.name = 'Error'; const g = new Error('n'); g.stack = 'custom stack'; g.message = 42; g.name = 7; return [e, g];`);
body('error with a throwing stack getter', `const e = new Error('thrown'); Object.defineProperty(e, 'stack', { get() { throw new Error('no'); } }); return [e];`, { noMutation: true });
body('error with an object stack', `const e = new Error('obj'); e.stack = { frames: [1, { deep: { deeper: { deepest: {} } } }], text: 'x' }; const n = new Error('num'); n.stack = 42; return [e, n];`);
body('error with a symbol name', `const e = new Error('m'); e.stack = ''; e.name = Symbol('n'); try { return [e]; } catch (x) { return [String(x.name)]; }`, { noMutation: true });
body('error with a non-string name in its stack', `const e = new Error('m'); e.name = 42; e.stack = '42: m\\n    at f (a.js:1:1)'; const n = Object.setPrototypeOf(new Error('p'), null); n.name = 7; n.stack = 'Error: p\\n    at f (a.js:1:1)'; return [e, n];`);
body('error with suppressed-style keys', `const e = new Error('s'); e.stack = 'SuppressedError: s\\n    at f (a.js:1:1)'; Object.defineProperty(e, 'error', { value: new RangeError('inner') }); Object.defineProperty(e, 'suppressed', { value: 2 }); e.error.stack = 'RangeError: inner\\n    at g (a.js:1:1)'; return [e];`);
body('recursion frames are collapsed', `const frames = ['Error: deep']; for (let i = 0; i < 6; i++) frames.push('    at top (a.js:1:1)'); for (let i = 0; i < 12; i++) frames.push('    at rec (a.js:2:2)'); for (let i = 0; i < 4; i++) { frames.push('    at a (a.js:3:3)'); frames.push('    at b (a.js:4:4)'); } frames.push('    at main (a.js:5:5)'); const e = new Error('deep'); e.stack = frames.join('\\n'); return [e];`);
body('alternating frames are collapsed', `const frames = ['Error: alt']; for (let i = 0; i < 5; i++) { frames.push('    at x (a.js:1:1)'); frames.push('    at y (a.js:2:2)'); frames.push('    at z (a.js:3:3)'); } frames.push('    at x (a.js:1:1)'); frames.push('    at end (a.js:9:9)'); const e = new Error('alt'); e.stack = frames.join('\\n'); return [e];`);
body('real recursion stack', `function rec(n) { if (n === 0) throw new Error('bottom'); return rec(n - 1); } try { rec(30); } catch (e) { return [e]; }`, { stackTraceLimit: 40 });
body('short stacks are never collapsed', `const e = new Error('s'); e.stack = 'Error: s\\n' + Array.from({ length: 10 }, () => '    at same (a.js:1:1)').join('\\n'); return [e];`);
// Node's built-in constructor names grow with the globals each major has when util.inspect loads.
const NAMED = `const named = (name) => Object.defineProperty(function () {}, 'name', { value: name });`;
body('%s and constructors named after newer globals', `${NAMED} const out = ['%s %s %s %s'];
for (const name of ['Atomics', 'Iterator', 'Float16Array', 'NotAGlobal']) {
  const proto = { toString() { return 'custom ' + name; } };
  Object.defineProperty(proto, 'constructor', { value: named(name) });
  out.push(Object.create(proto));
}
return out;`);
con('showHidden stops at prototypes of newer globals', `${NAMED} for (const name of ['Atomics', 'Iterator', 'Float16Array']) {
  const base = { inherited: name };
  Object.defineProperty(base, 'constructor', { value: named(name) });
  const mid = Object.create(base, { constructor: { value: named('Thing') }, own: { value: 1, enumerable: true } });
  console.dir(Object.create(mid), { showHidden: true });
}`);
// Function names that are not strings.
body('function with a non-string name', `function f() {} Object.defineProperty(f, 'name', { value: 42 }); function g() {} Object.defineProperty(g, 'name', { value: { n: 1 } }); return [f, g];`);
// console.assert (22+: non-string first arguments are formatted).
con('assert with every kind of first argument', `console.assert(false); console.assert(false, 1, 2); console.assert(false, { a: 1 }, 'x'); console.assert(false, '%s!', 'fmt'); console.assert(false, null); console.assert(0, [1]);`);
// Options.
con('numericSeparator edge numbers', `console.dir([-0, 0, 1.5e-7, -1e-7, 123456.789e10, 1e300, NaN, -Infinity, 0.1, -12345.6789], { numericSeparator: true });`);
con('breakLength Infinity', `console.dir({ a: 'x'.repeat(100), b: { c: ['y'.repeat(50), 'z'.repeat(50)] } }, { breakLength: Infinity }); console.dir(['a\\nb', { s: 'line1\\nline2' }], { breakLength: Infinity }); console.dir({ long: 'w'.repeat(30) + '\\n' + 'w'.repeat(30), n: 1 }, { breakLength: Infinity, compact: 1 });`);
con('breakLength Infinity with line breaks in entries', `const e = new Error('two'); e.stack = 'Error: two\\n    at f (a.js:1:1)'; console.dir({ e, n: [1, 2] }, { compact: true, breakLength: Infinity }); console.dir([e, 'x'], { compact: true, breakLength: Infinity }); console.dir({ e }, { breakLength: Infinity });`);
con('getters returning functions and objects', `console.dir({ get f() { return function inner() {}; }, get c() { return class K {}; }, get o() { return { deep: { x: 1 } }; } }, { getters: true });`);
con('getter throwing an object', `console.dir({ get t() { throw { code: 1 }; }, get n() { throw null; } }, { getters: true });`);
// Regular expressions with colors (syntax highlighting in 26).
con('regexp colors', String.raw`console.dir([/^(?<year>\d{4})-(?:\d{2}|[a-z\-]+)\k<year>(?=a)(?<!b)\x41\1$/gi, /[^\]\\\u{1F600}\p{L}-]*?\p{Lu}+.{2,}(?!x)\u{41}a{3}/u, /x{,3}{a}b{2,c\/]/, /\u{12/, /\k<open/, /(a)|[/]\x4/m, /\p{L/], { colors: true });`);
con('regexp colors with properties and labels', `class R extends RegExp {} const re = Object.assign(/a+b?/, { p: 1 }); console.dir([re, new R('r|s'), Object.setPrototypeOf(/n/, null)], { colors: true }); console.dir(re, { colors: true, depth: -1 });`);

export const CORPUS = cases;

/**
 * The issue's three examples of util.inspect output that differs between the Node majors the
 * console follows (src/isolate/js/console/README.md lists them): each probe is a value's source, formatted by
 * console.log. PROBE_OUTPUT is what each major prints; a major the console does not know follows
 * NEWEST_LTS_MAJOR.
 */
export const PROBES = ['new Uint8Array([1, 2]).buffer', "{ [Symbol('s')]: 4 }", 'new Proxy({ a: 1 }, {})'];
export const NEWEST_LTS_MAJOR = 24;
export const PROBE_OUTPUT = {
  20: ['ArrayBuffer { [Uint8Contents]: <01 02>, byteLength: 2 }', '{ [Symbol(s)]: 4 }', '{ a: 1 }'],
  22: ['ArrayBuffer { [Uint8Contents]: <01 02>, [byteLength]: 2 }', '{ [Symbol(s)]: 4 }', '{ a: 1 }'],
  24: ['ArrayBuffer { [Uint8Contents]: <01 02>, [byteLength]: 2 }', '{ Symbol(s): 4 }', '{ a: 1 }'],
  26: ['ArrayBuffer { [Uint8Contents]: <01 02>, [byteLength]: 2 }', '{ Symbol(s): 4 }', 'Proxy({ a: 1 })'],
};
/** Majors the console does not know, which must follow NEWEST_LTS_MAJOR. */
export const UNKNOWN_MAJORS = [18, 19, 21, 23, 25, 27, 28, 99, 0, -1, 24.5, '26'];

/**
 * The exact output the case must have under Node `major`: `expectedSince[k]` for the greatest
 * k <= major (the output changed in Node k), else `expected`.
 */
export function expectedFor(testCase, major) {
  let expected = testCase.expected;
  let from = -Infinity;
  for (const [k, v] of Object.entries(testCase.expectedSince ?? {})) {
    if (Number(k) <= major && Number(k) > from) {
      from = Number(k);
      expected = v;
    }
  }
  return expected;
}

/**
 * The case's documented difference from the Node major `major` runs under, if any: a
 * `knownDifference` with `majors` applies to those majors only (elsewhere the case must match).
 */
export function knownDifferenceFor(testCase, major) {
  const known = testCase.knownDifference;
  if (known === undefined || (known.majors !== undefined && !known.majors.includes(major))) return undefined;
  return known;
}

// Mutation test: after the console formatter is loaded, the program replaces/deletes
// these globals, prototype methods and iterators and adds getters/setters
// everywhere; every format case must still produce the unmutated output.
export const MUTATIONS = String.raw`
  const thrower = function () { throw new Error('mutated builtin was called'); };
  const getterThrower = { get() { throw new Error('mutated getter was called'); }, set(v) { throw new Error('mutated setter was called'); }, configurable: true };
  const defineProperty = Object.defineProperty;
  const getOwnPropertyNames = Object.getOwnPropertyNames;
  const getOwnPropertySymbols = Object.getOwnPropertySymbols;
  const gopd = Object.getOwnPropertyDescriptor;
  const targets = [Object.prototype, Array.prototype, String.prototype, Number.prototype, Boolean.prototype,
    Symbol.prototype, BigInt.prototype, Function.prototype, Map.prototype, Set.prototype, WeakMap.prototype,
    WeakSet.prototype, Date.prototype, RegExp.prototype, Error.prototype, Promise.prototype,
    ArrayBuffer.prototype, SharedArrayBuffer.prototype, DataView.prototype, Object.getPrototypeOf(Uint8Array.prototype),
    Object.getPrototypeOf([][Symbol.iterator]()), Object.getPrototypeOf(new Map().entries()),
    Object.getPrototypeOf(new Set().values()), Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())),
    Object, Array, String, Number, Math, JSON, Reflect, Symbol, Promise, Date, BigInt, Error];
  // Collect first: the mutations below break the very methods used to collect.
  const plan = [];
  for (let t = 0; t < targets.length; t++) {
    const target = targets[t];
    const names = getOwnPropertyNames(target);
    const symbols = getOwnPropertySymbols(target);
    const keys = [];
    for (let i = 0; i < names.length; i++) keys[keys.length] = names[i];
    for (let i = 0; i < symbols.length; i++) keys[keys.length] = symbols[i];
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k];
      if (key === 'prototype' || key === 'constructor' || key === 'length' || key === 'name') continue;
      const d = gopd(target, key);
      if (!d.configurable) continue;
      if (typeof d.value === 'function') plan[plan.length] = [target, key, { value: thrower, writable: true, configurable: true }];
      else if (d.get) plan[plan.length] = [target, key, getterThrower];
    }
  }
  // Getters/setters that a careless implementation would hit.
  const extra = ['value', 'get', 'set', 'done', 'name', 'message', 'stack', 'cause', 'errors', 'index', 'input',
    'lastIndex', 'length', 'size', 'prototype', 'toString', 'valueOf', 'then', 'circular', 'seen',
    'budget', 'indentationLvl', 'currentDepth', 'depth', '0', '1', '2', '3', '4', '5', '10', '99', '100',
    'enumerable', 'writable', 'configurable', 'groups', 'indices', 'toJSON', 'href'];
  for (let i = 0; i < extra.length; i++) {
    plan[plan.length] = [Object.prototype, extra[i], getterThrower];
    plan[plan.length] = [Array.prototype, extra[i], getterThrower];
  }
  const syms = [Symbol.toStringTag, Symbol.toPrimitive, Symbol.iterator, Symbol.species, Symbol.for('nodejs.util.inspect.custom')];
  for (let i = 0; i < syms.length; i++) plan[plan.length] = [Object.prototype, syms[i], getterThrower];
  const strSyms = [Symbol.replace, Symbol.split, Symbol.match, Symbol.search, Symbol.matchAll];
  for (let i = 0; i < strSyms.length; i++) plan[plan.length] = [String.prototype, strSyms[i], { value: thrower, configurable: true }];
  const globals = ['Object', 'Array', 'String', 'Number', 'Boolean', 'Symbol', 'BigInt', 'Map', 'Set',
    'WeakMap', 'WeakSet', 'JSON', 'Reflect', 'Math', 'Date', 'RegExp', 'Promise', 'Proxy', 'Uint8Array',
    'ArrayBuffer', 'DataView', 'Function', 'parseInt', 'parseFloat', 'isNaN', 'Iterator', 'Error', 'TypeError'];
  const g = globalThis;
  for (let i = 0; i < plan.length; i++) {
    try { defineProperty(plan[i][0], plan[i][1], plan[i][2]); } catch {}
  }
  for (let i = 0; i < globals.length; i++) g[globals[i]] = undefined;
`;
