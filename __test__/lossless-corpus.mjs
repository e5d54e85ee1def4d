// The lossless-JSON corpus: one list of cases for the three walkers that enforce
// docs/seam.md#lossless-json (and docs/python.md#lossless-values), run by
// __test__/lossless-corpus.test.mjs:
//
//   src/isolate/lossless.rs  a TypeScript program's completion and binding arguments
//   lib/lossless.mjs         binding resolutions, in both backends
//   py/protocol.py           a Python program's completion and binding arguments
//
// A case:
//   id       also the binding function's name the case is sent through
//   about    why it passes or is refused
//   js       a JavaScript expression: evaluated in the isolate (completion, argument) and in Node
//            (the host function's resolution); absent for Python-only values
//   py       a Python expression of the same value (or its nearest Python counterpart, said in
//            `about`); absent where Python has none (undefined, symbols, holes, getters)
//   json     passes: the compact JSON of what the host receives, at every boundary
//   refused  is refused everywhere; its value is the Python walker's reason (docs/python.md's
//            table), or null for a case without `py`. The TypeScript messages and the host's
//            resolution message carry no reason (docs/failures.md): see MESSAGES.
//   hostOnly the expression needs Node (`vm` is in scope): only lib/lossless.mjs judges it
//   noTsCompletion  a TypeScript completion of this value is success without a value
//            (docs/seam.md#result-shape), not a refusal; every other boundary refuses it

/** The refusal messages (docs/seam.md#lossless-json); kind `invalid-output` for a completion. */
export const MESSAGES = {
  completion: 'program completion must be lossless JSON',
  arguments: 'binding arguments must be lossless JSON',
  resolution: 'binding resolution must be lossless JSON',
}

/** Python's child-side messages add the reason in parentheses (docs/python.md). */
export const withReason = (message, reason) => `${message} (${reason})`

const DEPTH = 3000 // the depth docs/seam.md promises crosses every boundary
const deepArray = (leaf) => `(() => { let a = ${leaf}; for (let i = 0; i < ${DEPTH}; i++) a = [a]; return a })()`
const pyDeepArray = (leaf) => `__import__("functools").reduce(lambda a, _: [a], range(${DEPTH}), ${leaf})`

export const CASES = [
  // Plain values
  { id: 'null', about: 'null is a value', js: 'null', py: 'None', json: 'null' },
  { id: 'booleans', about: 'true and false', js: '[true, false]', py: '[True, False]', json: '[true,false]' },
  { id: 'integers', about: 'small integers', js: '[0, 1, -1, 42]', py: '[0, 1, -1, 42]', json: '[0,1,-1,42]' },
  { id: 'fractions', about: 'finite fractions', js: '[1.5, -0.25, 0.1]', py: '[1.5, -0.25, 0.1]', json: '[1.5,-0.25,0.1]' },
  { id: 'integral-float', about: "Python's 1.0 is JavaScript's 1", js: '1.0', py: '1.0', json: '1' },
  { id: 'empty-string', about: 'the empty string', js: "''", py: "''", json: '""' },
  {
    id: 'string-escapes',
    about: 'quotes, backslashes, controls and non-ASCII survive',
    js: String.raw`'quote " backslash \\ newline \n tab \t nul \u0000 é 😀'`,
    py: String.raw`'quote " backslash \\ newline \n tab \t nul \u0000 é 😀'`,
    json: String.raw`"quote \" backslash \\ newline \n tab \t nul \u0000 é 😀"`,
  },
  { id: 'empty-containers', about: 'empty arrays and objects', js: '[[], {}]', py: '[[], {}]', json: '[[],{}]' },
  { id: 'empty-key', about: 'the empty string is a key like any other', js: "({ '': 1 })", py: '{"": 1}', json: '{"":1}' },
  {
    id: 'line-separators',
    about: 'U+2028, U+2029 and DEL are not escaped',
    js: String.raw`'\u2028\u2029\u007f'`,
    py: String.raw`'\u2028\u2029\u007f'`,
    json: '"\u2028\u2029\u007f"',
  },

  // Nesting, order, sharing
  {
    id: 'nested',
    about: 'arrays and objects built from lossless values',
    js: '({ a: [1, { b: [null, "x"] }], c: {} })',
    py: '{"a": [1, {"b": [None, "x"]}], "c": {}}',
    json: '{"a":[1,{"b":[null,"x"]}],"c":{}}',
  },
  {
    id: 'key-order',
    about: 'keys keep Reflect.ownKeys order: integer-like keys first (a Python dict is sent in insertion order; the host parse orders them)',
    js: '({ b: 1, a: 2, 10: 3, 2: 4 })',
    py: '{"b": 1, "a": 2, "10": 3, "2": 4}',
    json: '{"2":4,"10":3,"b":1,"a":2}',
  },
  { id: 'null-prototype', about: 'an object with a null prototype is plain', js: 'Object.assign(Object.create(null), { a: 1 })', json: '{"a":1}' },
  {
    id: 'proto-key',
    about: 'an own __proto__ key stays an own key',
    js: `JSON.parse('{"__proto__": 1, "a": [2]}')`,
    py: '{"__proto__": 1, "a": [2]}',
    json: '{"__proto__":1,"a":[2]}',
  },
  { id: 'proto-computed-key', about: 'a computed __proto__ key is an own key too', js: "({ ['__proto__']: [1] })", py: '{"__proto__": [1]}', json: '{"__proto__":[1]}' },
  { id: 'proto-literal', about: 'a literal __proto__: null sets the prototype, it is no key', js: '({ __proto__: null, a: 1 })', json: '{"a":1}' },
  {
    id: 'shared-reference',
    about: 'a shared (non-cyclic) reference is copied once per occurrence',
    js: '(() => { const s = { k: [1] }; return [s, s, { s }] })()',
    py: '(lambda s: [s, s, {"s": s}])({"k": [1]})',
    json: '[{"k":[1]},{"k":[1]},{"s":{"k":[1]}}]',
  },
  {
    id: 'shared-wide-list',
    about: "a shared list wide enough for Python's flat path",
    js: '(() => { const s = [0, 1, 2, 3, 4, 5, 6, 7]; return [s, s] })()',
    py: '(lambda s: [s, s])(list(range(8)))',
    json: '[[0,1,2,3,4,5,6,7],[0,1,2,3,4,5,6,7]]',
  },
  { id: 'wide-zeros', about: 'a wide list of +0', js: 'Array(8).fill(0)', py: '[0.0] * 8', json: '[0,0,0,0,0,0,0,0]' },
  {
    id: 'wide-literals',
    about: "null and booleans in a list wide enough for Python's flat path",
    js: '[null, true, false, null, true, false, null, true, false]',
    py: '[None, True, False] * 3',
    json: '[null,true,false,null,true,false,null,true,false]',
  },
  {
    id: 'wide-lone-surrogates',
    about: "lone surrogates in a list of strings wide enough for Python's flat path",
    js: String.raw`Array(8).fill('\uD800')`,
    py: String.raw`['\ud800'] * 8`,
    json: '[' + Array(8).fill(String.raw`"\ud800"`).join(',') + ']',
  },
  { id: 'frozen', about: 'a frozen array and object are still plain', js: '[Object.freeze([1]), Object.freeze({ a: 1 })]', json: '[[1],{"a":1}]' },
  {
    id: 'deep-array',
    about: `a ${DEPTH}-deep array crosses (the walks are iterative)`,
    js: deepArray('null'),
    py: pyDeepArray('None'),
    json: '['.repeat(DEPTH) + 'null' + ']'.repeat(DEPTH),
  },
  {
    id: 'deep-object',
    about: `a ${DEPTH}-deep object crosses`,
    js: `(() => { let a = null; for (let i = 0; i < ${DEPTH}; i++) a = { a }; return a })()`,
    py: `__import__("functools").reduce(lambda a, _: {"a": a}, range(${DEPTH}), None)`,
    json: '{"a":'.repeat(DEPTH) + 'null' + '}'.repeat(DEPTH),
  },
  { id: 'deep-negative-zero', about: `-0 at the bottom of a ${DEPTH}-deep array is found`, js: deepArray('-0'), py: pyDeepArray('-0.0'), refused: 'negative zero' },

  // Numbers
  {
    id: 'safe-integer-bounds',
    about: '±(2^53−1) and 2^53 are exact doubles',
    js: '[9007199254740991, -9007199254740991, 2 ** 53]',
    py: '[2**53 - 1, -(2**53 - 1), 2**53]',
    json: '[9007199254740991,-9007199254740991,9007199254740992]',
  },
  { id: 'huge-integral', about: '2^60 is an exact double (Python sends its digits; the host holds the double)', js: '2 ** 60', py: '2**60', json: '1152921504606847000' },
  {
    id: 'exact-integer-beyond-safe',
    about: 'beyond ±(2^53−1) an integer passes when it is exactly a double',
    js: '[2 ** 53 + 2, -(2 ** 53 + 2), 2 ** 1023]',
    py: '[2**53 + 2, -(2**53 + 2), 2**1023]',
    json: '[9007199254740994,-9007199254740994,8.98846567431158e+307]',
  },
  {
    id: 'extreme-doubles',
    about: 'the largest and smallest doubles and exponent spellings (Python sends integral ones as digits)',
    js: '[1e21, 1.7976931348623157e308, 5e-324, 1e-7, -1.5e-7, 123456789012345680000]',
    py: '[1e21, 1.7976931348623157e308, 5e-324, 1e-7, -1.5e-7, 123456789012345680000.0]',
    json: '[1e+21,1.7976931348623157e+308,5e-324,1e-7,-1.5e-7,123456789012345680000]',
  },
  { id: 'negative-zero', about: '-0 would come back as 0', js: '-0', py: '-0.0', refused: 'negative zero' },
  { id: 'negative-zero-nested', about: '-0 inside an object', js: '({ a: { b: -0 } })', py: '{"a": {"b": -0.0}}', refused: 'negative zero' },
  {
    id: 'negative-zero-wide',
    about: "-0 at the end of a list wide enough for Python's flat path",
    js: 'Array(7).fill(1.5).concat([-0])',
    py: '[1.5] * 7 + [-0.0]',
    refused: 'negative zero',
  },
  { id: 'python-int-zero', about: "Python's -0 is the int 0, not negative zero", py: '-0', json: '0' },
  { id: 'nan', about: 'NaN has no JSON', js: 'NaN', py: 'float("nan")', refused: 'non-finite float' },
  { id: 'infinity', about: 'Infinity has no JSON', js: 'Infinity', py: 'float("inf")', refused: 'non-finite float' },
  { id: 'negative-infinity', about: '-Infinity has no JSON', js: '-Infinity', py: 'float("-inf")', refused: 'non-finite float' },
  { id: 'overflowing-literal', about: '1e400 is Infinity in both languages', js: '1e400', py: '1e400', refused: 'non-finite float' },
  { id: 'nan-nested', about: 'NaN inside an object inside an array', js: '[1, { x: NaN }]', py: '[1, {"x": float("nan")}]', refused: 'non-finite float' },
  {
    id: 'infinity-wide',
    about: "Infinity at the end of a list wide enough for Python's flat path",
    js: 'Array(9).fill(1.5).concat([Infinity])',
    py: '[1.5] * 9 + [float("inf")]',
    refused: 'non-finite float',
  },
  { id: 'bigint', about: 'a bigint is not a number, however small', js: '10n', refused: null },
  {
    id: 'unsafe-integer',
    about: '2^53+1 is no double: a JavaScript bigint, a Python int',
    js: '2n ** 53n + 1n',
    py: '2**53 + 1',
    refused: 'integer not exactly representable as a JavaScript number',
  },
  {
    id: 'unsafe-integer-wide',
    about: "an unsafe integer at the end of a list wide enough for Python's flat path",
    js: '[0, 1, 2, 3, 4, 5, 6, 2n ** 53n + 1n]',
    py: 'list(range(7)) + [2**53 + 1]',
    refused: 'integer not exactly representable as a JavaScript number',
  },
  { id: 'python-int-overflow', about: 'an int beyond every double', py: '10**400', refused: 'integer not exactly representable as a JavaScript number' },

  // undefined, functions, symbols
  { id: 'undefined', about: 'undefined is no value', js: 'undefined', refused: null, noTsCompletion: true },
  { id: 'undefined-in-object', about: 'a JSON copy would drop the key', js: '({ a: undefined })', refused: null },
  { id: 'undefined-in-array', about: 'a JSON copy would write null', js: '[undefined]', refused: null },
  { id: 'function', about: 'functions have no JSON', js: '() => 1', py: 'lambda: 1', refused: 'unsupported type (function)' },
  { id: 'function-in-object', about: 'a method value', js: '({ f() {} })', py: '{"f": lambda: 1}', refused: 'unsupported type (function)' },
  { id: 'symbol', about: 'symbols have no JSON', js: 'Symbol("s")', refused: null },
  { id: 'symbol-key', about: 'a JSON copy would drop a symbol key', js: '({ [Symbol("k")]: 1 })', refused: null },

  // Objects with internal state or another prototype
  { id: 'date', about: 'a Date (Python: a datetime)', js: 'new Date(0)', py: '__import__("datetime").datetime(1970, 1, 1)', refused: 'unsupported type (datetime)' },
  { id: 'date-object-prototype', about: 'a Date is refused whatever its prototype', js: 'Object.setPrototypeOf(new Date(0), Object.prototype)', refused: null },
  { id: 'map', about: 'a Map', js: 'new Map([["a", 1]])', refused: null },
  { id: 'set', about: 'a Set (Python: a set)', js: 'new Set([1])', py: '{1}', refused: 'unsupported type (set)' },
  { id: 'typed-array', about: 'a typed array (Python: bytes)', js: 'new Uint8Array([1, 2])', py: String.raw`b"\x01\x02"`, refused: 'unsupported type (bytes)' },
  { id: 'array-buffer', about: 'an ArrayBuffer (Python: a bytearray)', js: 'new ArrayBuffer(2)', py: 'bytearray(2)', refused: 'unsupported type (bytearray)' },
  { id: 'regexp', about: 'a RegExp', js: '/a/g', refused: null },
  { id: 'error', about: 'an error instance', js: 'new Error("e")', py: 'ValueError("e")', refused: 'unsupported type (ValueError)' },
  { id: 'boxed-number', about: 'a boxed primitive', js: 'Object(1)', refused: null },
  { id: 'boxed-string', about: 'a boxed string (Python: a str subclass)', js: 'new String("x")', py: 'type("S", (str,), {})("x")', refused: 'unsupported type (S)' },
  {
    id: 'class-instance',
    about: 'a class instance, own properties notwithstanding',
    js: 'new (class Point { constructor() { this.x = 1 } })()',
    py: 'type("Point", (), {})()',
    refused: 'unsupported type (Point)',
  },
  {
    id: 'array-subclass',
    about: 'an Array subclass (Python: a list subclass)',
    js: '(() => { class Sub extends Array {}; return Sub.of(1) })()',
    py: 'type("Sub", (list,), {})([1])',
    refused: 'unsupported type (Sub)',
  },
  { id: 'dict-subclass', about: 'a dict subclass', py: '__import__("collections").OrderedDict(a=1)', refused: 'unsupported type (OrderedDict)' },
  { id: 'array-with-object-prototype', about: "an array whose prototype is not Array.prototype", js: 'Object.setPrototypeOf([1], Object.prototype)', refused: null },
  { id: 'object-with-array-prototype', about: 'an object whose prototype is Array.prototype', js: 'Object.setPrototypeOf({}, Array.prototype)', refused: null },
  { id: 'object-with-other-prototype', about: 'an inherited property would be lost', js: 'Object.create({ inherited: 1 })', refused: null },
  { id: 'arguments', about: 'an arguments object', js: '(function () { return arguments })(1)', refused: null },
  { id: 'hidden-property', about: 'a non-enumerable property would be lost', js: 'Object.defineProperty({}, "hidden", { value: 1 })', refused: null },
  { id: 'proxy', about: 'a Proxy is refused without running its traps', js: 'new Proxy({}, {})', refused: null },
  { id: 'proxy-array', about: 'a Proxy of an array too', js: 'new Proxy([1], {})', refused: null },
  {
    id: 'foreign-realm',
    about: "a vm context's plain containers, recognised by that realm's intrinsics (host side only)",
    js: 'vm.runInNewContext(\'({ a: [1, { b: null }], c: "x" })\')',
    hostOnly: true,
    json: '{"a":[1,{"b":null}],"c":"x"}',
  },

  // Arrays
  { id: 'sparse-array', about: 'a hole would come back as null', js: '[1, , 3]', refused: null },
  { id: 'empty-slots', about: 'an array of holes only', js: 'Array(2)', refused: null },
  { id: 'array-extra-property', about: 'an extra own property would be lost', js: 'Object.assign([1], { extra: 1 })', refused: null },
  { id: 'array-hidden-property', about: 'an extra non-enumerable property too', js: 'Object.defineProperty([1], "extra", { value: 1 })', refused: null },
  {
    id: 'array-non-index-key',
    about: '2^32−1 is no array index, so it is an extra property',
    js: '(() => { const a = [1]; a[4294967295] = 2; return a })()',
    refused: null,
  },

  // Cycles
  { id: 'cycle-object', about: 'an object containing itself', js: '(() => { const a = {}; a.self = a; return a })()', py: '(lambda d: (d.__setitem__("self", d), d)[1])({})', refused: 'circular reference' },
  { id: 'cycle-array', about: 'an array containing itself', js: '(() => { const a = []; a.push(a); return a })()', py: '(lambda l: (l.append(l), l)[1])([])', refused: 'circular reference' },
  {
    id: 'cycle-indirect',
    about: 'a cycle through three containers',
    js: '(() => { const a = { b: { c: [] } }; a.b.c.push(a); return a })()',
    py: '(lambda a: (a["b"]["c"].append(a), a)[1])({"b": {"c": []}})',
    refused: 'circular reference',
  },

  // Lone surrogates
  { id: 'lone-high-surrogate', about: 'a lone surrogate is kept', js: String.raw`'\uD800'`, py: String.raw`'\ud800'`, json: String.raw`"\ud800"` },
  { id: 'lone-low-surrogate', about: 'a lone low surrogate is kept, beside other text', js: String.raw`'x\uDC00y'`, py: String.raw`'x\udc00y'`, json: String.raw`"x\udc00y"` },
  { id: 'surrogate-pair', about: 'a spelled-out pair is one astral character', js: String.raw`'\uD83D\uDE00'`, py: String.raw`'\ud83d\ude00'`, json: '"😀"' },
  { id: 'lone-surrogate-key', about: 'a lone surrogate in a key is kept', js: String.raw`({ '\uDC00': 1 })`, py: String.raw`{'\udc00': 1}`, json: String.raw`{"\udc00":1}` },
  { id: 'surrogate-pair-key', about: 'a spelled-out pair in a key is one astral character', js: String.raw`({ '\uD83D\uDE00': 1 })`, py: String.raw`{'\ud83d\ude00': 1}`, json: '{"😀":1}' },
  {
    id: 'python-folded-key-collision',
    about: 'two Python keys that fold into one astral key (one key in JavaScript)',
    py: String.raw`{"\ud83d\ude00": 1, "😀": 2}`,
    refused: 'duplicate dict key after surrogate-pair combining',
  },

  // Python-only shapes
  { id: 'python-tuple', about: 'a tuple would come back as a list', py: '(1, 2)', refused: 'unsupported type (tuple)' },
  { id: 'python-int-key', about: 'a non-string key would come back as a string', py: '{1: "a"}', refused: 'non-string dict key (int)' },

  // Getters and toJSON
  { id: 'getter', about: 'an accessor is read with an ordinary get', js: '({ get a() { return 1 } })', json: '{"a":1}' },
  { id: 'getter-read-once', about: 'each property is read exactly once', js: '(() => { let n = 0; return { get a() { return ++n } } })()', json: '{"a":1}' },
  {
    id: 'getter-adds-key',
    about: 'the keys are taken once, before any value is read: a key a getter adds is not copied',
    js: '({ get a() { this.b = 2; return 1 } })',
    json: '{"a":1}',
  },
  {
    id: 'getter-deletes-key',
    about: 'a key a getter deleted reads as undefined',
    js: '({ get a() { delete this.b; return 1 }, b: 2 })',
    refused: null,
  },
  {
    id: 'getter-on-index',
    about: 'an accessor at an array index',
    js: 'Object.defineProperty([0], 0, { get: () => 5, enumerable: true })',
    json: '[5]',
  },
  { id: 'getter-throws', about: 'a getter that throws makes the value invalid', js: '({ get a() { throw new Error("g") } })', refused: null },
  {
    id: 'getter-shortens-array',
    about: 'a getter that shortens its array makes it invalid',
    js: '(() => { const a = [1, 2]; Object.defineProperty(a, 0, { get() { a.length = 1; return 1 }, enumerable: true, configurable: true }); return a })()',
    refused: null,
  },
  { id: 'to-json-ignored', about: 'toJSON is ignored: a method is a function value', js: '({ toJSON() { return 1 } })', refused: null },
  { id: 'to-json-data', about: 'toJSON as data is an ordinary key', js: "({ toJSON: 'x' })", py: '{"toJSON": "x"}', json: '{"toJSON":"x"}' },
]
