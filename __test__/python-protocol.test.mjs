// The fd-3 protocol mirror between the Rust host and py/protocol.py (docs/acceptance.md, cases
// 15–17, the number at the end of a title). The host codec itself (cases 1–14) is covered by Rust
// unit tests in src/python (scan, codec, meter, logs, wire, numbers); these check that both sides
// agree and that the package ships the child.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { afterAll, describe, expect, it, vi } from 'vitest'
import vm from 'node:vm'
import native from '../lib/native.mjs'
import { exactDigits, losslessJson } from '../lib/lossless.mjs'

const encodeLossless = (value) => losslessJson(value, exactDigits)
import { PY_DIR, bootNamespaces } from '../lib/python-runtime.mjs'
import { PYTHON, liveProcesses, privateTmpdir, unreapedChildren } from './python-helpers.mjs'

vi.setConfig({ testTimeout: 20_000, hookTimeout: 20_000 })
const TMP = privateTmpdir('py-protocol')

afterAll(() => {
  expect(liveProcesses(TMP)).toEqual([])
  expect(unreapedChildren()).toEqual([])
  fs.rmSync(TMP, { recursive: true, force: true })
})

/** Runs Python code with py/ importable and returns its JSON output. */
function python(code) {
  const prelude = `import json, sys\nsys.path.insert(0, ${JSON.stringify(PY_DIR)})\nimport protocol\n`
  return JSON.parse(execFileSync(PYTHON, ['-I', '-B', '-c', prelude + code], { encoding: 'utf8', env: { TMPDIR: TMP } }))
}

/** py/protocol.py's FRAMES as `{TypedDict: {frameType, required, optional}}`, keys sorted. */
const PY_ROSTER = `import typing
def row(t):
    ty = typing.get_type_hints(t).get("type")
    return {
        "frameType": typing.get_args(ty)[0] if ty is not None else None,
        "required": sorted(t.__required_keys__),
        "optional": sorted(t.__optional_keys__),
    }
print(json.dumps({t.__name__: row(t) for t in protocol.FRAMES}))`

/** The roster src/channel/table lists (docs/protocol.md#frame-roster), in the same form. */
function tableRoster() {
  const rows = native.pythonProtocolInfo().roster
  return Object.fromEntries(
    rows.map(({ name, frameType, required, optional }) => [
      name,
      { frameType: frameType ?? null, required: [...required].sort(), optional: [...optional].sort() },
    ]),
  )
}

describe('protocol mirror (real python3 -I -B -c)', () => {
  it('PROTOCOL_FD and the marker text agree across budgets (15)', () => {
    const budgets = [64, 100, 65536, 12345678]
    const py = python(`print(json.dumps([protocol.PROTOCOL_FD, [protocol.log_truncation_marker(n) for n in ${JSON.stringify(budgets)}]]))`)
    expect(py[0]).toBe(3)
    expect(native.pythonProtocolInfo().protocolFd).toBe(3)
    expect(py[1]).toEqual(budgets.map((n) => native.pythonLogTruncationMarker(n)))
    expect(py[1][0]).toBe('[code-runtime-native] log capture truncated at 64 bytes')
  })

  // The expected roster is the addon's table (src/channel/table), not a list written here.
  it("each frame's type and required and optional keys in py/protocol.py are the table's (16)", () => {
    const py = python(PY_ROSTER)
    const table = tableRoster()
    // Neither side may be empty, and the table's fd-3 frames are there, not only their objects.
    expect(Object.keys(table).length).toBeGreaterThan(0)
    expect(Object.values(table).filter((row) => row.frameType !== null).length).toBeGreaterThan(0)
    for (const [name, row] of Object.entries(table)) {
      expect(py[name], `py/protocol.py declares ${name}`).toEqual(row)
      if (row.frameType !== null) expect(row.required).toContain('type')
    }
    // And py/protocol.py declares nothing the table lacks.
    expect(Object.keys(py).sort()).toEqual(Object.keys(table).sort())
  })

  // lib/python-runtime.mjs spells the boot frame's namespaces; the table says what they hold.
  it("the boot frame's namespaces hold exactly the table's Namespace and ErrorClass keys", () => {
    const table = tableRoster()
    const keys = (name) => [...table[name].required, ...table[name].optional].sort()
    const declared = { global: 'g', names: ['a'], errorClass: { name: 'E', memberNameProperty: 'm', extra: 1 }, extra: 1 }
    const [withClass, bare] = bootNamespaces([declared, { global: 'h', names: [] }])
    expect(Object.keys(withClass).sort()).toEqual(keys('Namespace'))
    expect(Object.keys(withClass.errorClass).sort()).toEqual(keys('ErrorClass'))
    expect(Object.keys(bare).sort()).toEqual(table.Namespace.required)
  })

  it('number spelling and metering agree with JSON.stringify and the host', () => {
    const values = [0, 1, -1, 1.5, 0.1, 1e-7, 1e-6, 1e21, 2 ** 53, 2 ** 60, -(2 ** 60), 5e-324, 1.7976931348623157e308, 123.456, 1e300]
    // Every value crosses as a float, as a JavaScript number would.
    const py = python(`print(json.dumps([protocol.number_text(float(v)) for v in ${JSON.stringify(values)}]))`)
    const expected = values.map((v) => (Number.isInteger(v) && Math.abs(v) > Number.MAX_SAFE_INTEGER ? BigInt(v).toString() : String(v)))
    expect(py).toEqual(expected)
    const strings = ['', 'abc', 'é€😀', '"\\\b\f\n\r\t', '\u0000\u001f\u007f', '\u2028']
    const sizes = python(`print(json.dumps([protocol.string_cost(s) for s in ${JSON.stringify(strings)}] + [protocol.string_cost("\\ud800"), protocol.string_cost("\\ud83d\\ude00")]))`)
    expect(sizes).toEqual([...strings.map((s) => Buffer.byteLength(JSON.stringify(s))), 8, 6])
  })

  it('the iterative codec round-trips deep values', () => {
    const out = python(
      'v = None\nfor _ in range(5000):\n    v = [v, {"k": "é\\ud800"}]\ns = protocol.encode(v)\nd = protocol.decode(s)\nprint(json.dumps([len(s.encode("utf-8")), protocol.encoded_size(v), protocol.encode(d) == s]))',
    )
    expect(out[0]).toBe(out[1])
    expect(out[2]).toBe(true)
  })
})

// docs/seam.md#lossless-json
describe('host encoder for replies (14)', () => {
  it('equals JSON.stringify, except beyond-safe integral doubles, which keep their exact digits', () => {
    const corpus = [null, true, 0, -1.5, 1e-7, 1 / 3, 5e-324, 'é\uD800"\n', [], {}, { a: [1, { b: null }], ['__proto__']: 2 }, Object.create(null)]
    for (const v of corpus) expect(encodeLossless(v)).toBe(JSON.stringify(v))
    expect(encodeLossless(2 ** 60)).toBe('1152921504606846976')
    expect(encodeLossless(1e21)).toBe('1000000000000000000000')
    expect(encodeLossless([-(2 ** 60), 2 ** 53])).toBe('[-1152921504606846976,9007199254740992]')
    let deep = null
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(encodeLossless(deep)).toBe('['.repeat(100_000) + 'null' + ']'.repeat(100_000))
    const wide = new Array(50_000).fill(7)
    expect(encodeLossless(wide)).toBe(JSON.stringify(wide))
    const shared = { s: 1 }
    expect(encodeLossless({ a: shared, b: shared })).toBe('{"a":{"s":1},"b":{"s":1}}')
  })

  // docs/seam.md#lossless-json
  it('rejects every lossy value and reads each property once', () => {
    const cyclic = {}
    cyclic.self = cyclic
    const throwing = {}
    Object.defineProperty(throwing, 'x', { enumerable: true, get() { throw new Error('no') } })
    const extra = [1]
    Object.defineProperty(extra, 'extra', { value: 1 })
    const hidden = {}
    Object.defineProperty(hidden, 'h', { value: 1, enumerable: false })
    class Exotic {}
    class Sub extends Array {}
    const { proxy: revoked, revoke } = Proxy.revocable(function Object() {}, {})
    revoke()
    const impostorProto = { constructor: function Object() {} }
    const lossy = [
      { f: () => 1 }, () => 1, -0, Infinity, NaN, Array(2), [1, , 3], cyclic, new Exotic(), throwing, new Date(), extra,
      new Map(), new Sub(), [undefined], { value: undefined }, { [Symbol()]: true }, hidden, undefined, 1n, Symbol('s'),
      Object.create(impostorProto), revoked,
    ]
    for (const v of lossy) expect(encodeLossless(v)).toBeUndefined()
    let reads = 0
    const counted = {}
    Object.defineProperty(counted, 'x', { enumerable: true, get: () => ++reads })
    expect(encodeLossless(counted)).toBe('{"x":1}')
    expect(reads).toBe(1)
    const shrinking = [1, 2, 3]
    Object.defineProperty(shrinking, 0, { enumerable: true, get() { shrinking.length = 1; return 1 } })
    expect(encodeLossless(shrinking)).toBeUndefined()
    // Genuine intrinsics of another realm pass.
    expect(encodeLossless(vm.runInNewContext('({ a: [1, 2], b: Object.create(null) })'))).toBe('{"a":[1,2],"b":{}}')
  })
})

// docs/protocol.md#reply-decoding
describe('reply decoding: the C scanner only where it equals the exact decoder', () => {
  const records = Array.from({ length: 500 }, (_, i) => ({ id: i, name: `item-${i}`, tags: ['a', 'é'], score: i / 7, ok: i % 2 === 0 }))
  const hostSent = [
    null, true, 0, -1.5, 1e-7, 1 / 3, 5e-324, 2 ** 60, -(2 ** 60), 1e21, Number.MAX_VALUE, 'é\uD800"\n\u0000\u001f\u2028',
    '\uD83D\uDE00', '\uDE00\uD83D', { a: [1, { b: null }], ['__proto__']: 2 }, Object.create(null), [], records,
  ].map((v) => `{"type":"reply","id":7,"ok":true,"value":${encodeLossless(v)}}`)
  // Texts the host never sends, each a way the two decoders could differ.
  const crafted = [
    '{"a":1,"a":2,"b":3}', '{"__proto__":{"x":1}}', '"\\ud800\\udc00"', '"\\ud800\\u0041"', '"\\uDBFF\\uDFFF\\uDFFF"', '"\\/\\b\\f"',
    '1e400', '-1e400', '[1E400,-0,-0.0,0.1e1,12.50E+3]', '1' + '0'.repeat(400), '1' + '0'.repeat(5000), '[NaN]', 'Infinity',
    '[-Infinity]', ' [1]', '[1] ', '[1,]', '"\u0001"',
  ]
  // Deep texts are built in the child (they do not fit on a command line).
  const DEEP = '["[" * 100_000 + "]" * 100_000, \'{"a":\' * 3000 + "1" + "}" * 3000]'
  // `probe`: also report whether the raw scanner takes the whole text (never under a raised
  // recursion limit, where the raw scanner is exactly what must not run on a deep text).
  const check = (texts, prefix = '', extra = '[]', probe = true) =>
    python(`${prefix}
def sig(v):
    out, stack = [], [v]
    while stack:
        x = stack.pop()
        if type(x) is list:
            out.append(("list", len(x)))
            stack.extend(reversed(x))
        elif type(x) is dict:
            out.append(("dict", tuple(x)))
            stack.extend(reversed(list(x.values())))
        else:
            out.append((type(x).__name__, repr(x)))
    return out

def outcome(f, t):
    try:
        return ["ok", sig(f(t))]
    except Exception as e:
        return ["error", type(e).__name__]

res = []
for t in json.loads(${JSON.stringify(JSON.stringify(texts))}) + ${extra}:
    scanned = None
    if ${probe ? 'True' : 'False'}:
        try:
            scanned = protocol._scan(t, 0)[1] == len(t)
        except Exception:
            scanned = False
    res.append([outcome(protocol.decode, t) == outcome(protocol.exact_decode, t), scanned])
print(json.dumps(res))`)

  it('every reply the host sends takes the C scanner and decodes exactly as the exact decoder does', () => {
    expect(check(hostSent)).toEqual(hostSent.map(() => [true, true]))
  })

  it('duplicate keys, surrogate escapes, 1e400, huge integers, NaN/Infinity, whitespace and depth decode as the exact decoder does', () => {
    const out = check(crafted, '', DEEP)
    expect(out.map(([same]) => same)).toEqual([...crafted, 'deep list', 'deep dict'].map(() => true))
    // The scanner takes standard JSON and refuses the rest, which the exact decoder then handles.
    const scanned = Object.fromEntries(crafted.map((t, i) => [t.slice(0, 24), out[i][1]]))
    expect(scanned).toMatchObject({
      '{"a":1,"a":2,"b":3}': true, '"\\ud800\\udc00"': true, '"\\ud800\\u0041"': true, '1e400': true, '[NaN]': false, Infinity: false,
      '[-Infinity]': false, ' [1]': false, '[1] ': false, '[1,]': false, '"\u0001"': false,
    })
  })

  it('a program that raises the recursion limit cannot make a deep reply overflow the C stack', () => {
    const deep = '["[" * 200_000 + "]" * 200_000, \'{"a":\' * 100_000 + "null" + "}" * 100_000]'
    expect(check([], 'sys.setrecursionlimit(10**7)', deep, false)).toEqual([
      [true, null],
      [true, null],
    ])
  })
})
