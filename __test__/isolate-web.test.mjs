// The web-standard globals inside the isolate (docs/typescript.md#web-globals), compared with
// Node's own implementations in the same test run wherever Node has the same API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadIsolate } from './helpers.mjs'

let runtime
let fiber
beforeAll(async () => {
  ;({ runtime, fiber } = await loadIsolate())
})
afterAll(() => fiber.dispose())

async function value(program) {
  const result = await runtime.run({ program, bindings: [] })
  if (result.error) throw new Error(`${result.error.kind}: ${result.error.message}`)
  return result.value
}

/** Runs `body` (a function of no arguments returning lossless JSON) in the isolate and in Node. */
async function same(body) {
  const node = new Function(`return (${body})()`)()
  expect(await value(`return (${body})()`)).toEqual(JSON.parse(JSON.stringify(await node)))
}

describe('the global object', () => {
  it('adds exactly the runtime globals and nothing else', async () => {
    // The host Node's V8 context globals (console is one: V8 defines it, the runtime replaces it).
    const node = Object.getOwnPropertyNames(new (await import('node:vm')).Script('globalThis').runInNewContext())
    const own = await value(`return Object.getOwnPropertyNames(globalThis).filter((k) => !${JSON.stringify(node)}.includes(k)).sort()`)
    // ECMAScript globals of the isolate's V8 that an older host V8 lacks (Node 20 lacks all five,
    // Node 22 has Iterator).
    const newerEcmaScript = ['AsyncDisposableStack', 'DisposableStack', 'Float16Array', 'Iterator', 'SuppressedError'].filter(
      (k) => !node.includes(k),
    )
    const runtimeGlobals = ['atob', 'btoa', 'clearInterval', 'clearTimeout', 'crypto', 'performance', 'process',
      'queueMicrotask', 'setInterval', 'setTimeout', 'structuredClone', 'TextDecoder', 'TextEncoder', 'URL', 'URLSearchParams']
    expect(own).toEqual([...newerEcmaScript, ...runtimeGlobals].sort())
    expect(await value('return [typeof WebAssembly, Object.keys(globalThis)]')).toEqual(['undefined', []])
  })

  it('shows no runtime frames in any stack', async () => {
    const stacks = await value(`const out = []
      const grab = (f) => { try { f() } catch (e) { out.push(e.stack) } }
      grab(() => atob('*'))
      grab(() => new URL('not a url'))
      grab(() => structuredClone(() => 1))
      grab(() => new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])))
      grab(() => crypto.getRandomValues(new Float64Array(1)))
      grab(() => new URLSearchParams('a=1').forEach(() => { throw new Error('from the callback') }))
      grab(() => console.log('%s', { toString() { throw new Error('from toString') } }))
      grab(() => console.table([], 'not an array'))
      grab(() => process.exit('nope'))
      return out`)
    expect(stacks).toHaveLength(9)
    for (const stack of stacks) {
      expect(stack).not.toMatch(/code-runtime-native:|node:|file:|\/work\//)
      expect(stack).toMatch(/\n {4}at .*program\.ts:\d+:\d+/)
    }
  })
})

describe('TextEncoder and TextDecoder', () => {
  it('round-trip UTF-8 like Node', async () => {
    await same(`() => {
      const enc = new TextEncoder()
      const bytes = enc.encode('€ a\\uD800 😀')
      const into = new Uint8Array(5)
      const r = enc.encodeInto('😀ab', into)
      return [enc.encoding, Array.from(bytes), new TextDecoder().decode(bytes), r.read, r.written, Array.from(into),
        new TextDecoder().decode(new TextEncoder().encode('€')), Array.from(enc.encode())]
    }`)
  })

  it('decodes with fatal, ignoreBOM and streaming like Node', async () => {
    await same(`() => {
      const out = []
      const bom = new Uint8Array([0xef, 0xbb, 0xbf, 0x41])
      out.push(new TextDecoder().decode(bom), new TextDecoder('utf-8', { ignoreBOM: true }).decode(bom))
      out.push(new TextDecoder().decode(new Uint8Array([0x41, 0xff, 0xc3, 0x28, 0xe2, 0x82])))
      try { new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])) } catch (e) { out.push(e.name, e.code, e.message) }
      const d = new TextDecoder()
      out.push(d.decode(new Uint8Array([0xe2, 0x82]), { stream: true }), d.decode(new Uint8Array([0xac]), { stream: true }), d.decode())
      out.push(new TextDecoder(' UTF8 ').encoding, new TextDecoder('utf-8', { fatal: true }).fatal)
      try { new TextDecoder('klingon') } catch (e) { out.push(e.name, e.code, e.message) }
      out.push(new TextDecoder().decode(new Uint8Array([104, 105]).buffer), new TextDecoder().decode(new DataView(new Uint8Array([0x6f, 0x6b]).buffer)))
      return out
    }`)
  })
})

// Node's TextDecoder runs on ICU. Where ICU follows the WHATWG Encoding standard the isolate's
// (encoding_rs, the standard's own implementation) must give exactly Node's results; where it
// does not, the standard's results are asserted (docs/typescript.md#textdecoder-and-nodes-icu).
const NODE_MAJOR = Number(process.versions.node.split('.')[0])
const WHATWG_AS_NODE = ['utf-8', 'utf-16le', 'utf-16be', 'iso-8859-2', 'iso-8859-8-i', 'koi8-r', 'ibm866',
  'macintosh', 'x-mac-cyrillic', 'iso-2022-jp', 'x-user-defined', 'iso-8859-16',
  // Node 20's whole-input windows-1252 path drops bytes 0x80-0x9f; its streaming path does not.
  ...(NODE_MAJOR >= 22 ? ['windows-1252'] : [])]

describe('TextDecoder encodings', () => {
  it('resolve labels as Node does', async () => {
    await same(`() => ['utf-8', ' UTF8 ', 'utf-8\\f', '\\u00a0utf-8', 'UTF-16', 'unicode', 'ucs-2', 'utf-16be', 'latin1', 'ascii',
      'binary', 'cp1252', 'iso8859-15', 'csisolatin9', 'l2', 'koi', 'dos-874', 'cp866', 'mac', 'x-mac-roman', 'windows-1258',
      'sjis', 'x-sjis', 'csshiftjis', 'x-euc-jp', 'ks_c_5601-1987', 'iso-ir-149', 'big5-hkscs', 'cn-big5', 'x-gbk', 'gb2312',
      'gb18030', 'csiso2022jp', 'ISO-2022-JP', 'x-user-defined', 'iso-8859-16', 'replacement', 'hz-gb-2312', 'iso-2022-kr',
      'iso-2022-cn', 'klingon', ''].map((label) => {
        try { return new TextDecoder(label).encoding } catch (e) { return [e.name, e.code, e.message] }
      })`)
  })

  it('decode whole, byte by byte and fatally like Node', async () => {
    await same(`() => {
      let seed = 7
      const rnd = (n) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n }
      const common = [0x41, 0x80, 0xa1, 0xe2, 0x82, 0xff, 0x1b, 0x24, 0x42, 0x28, 0xd8, 0x00, 0xdc, 0x9f, 0xdf, 0x8e, 0xfe]
      const inputs = [[0xff, 0xdf, 0x9f], [0xef, 0xbb, 0xbf, 0x41], [0xff, 0xfe, 0x41, 0x00], [0xfe, 0xff, 0x00, 0x41]]
      for (let i = 0; i < 200; i++) {
        const bytes = []
        for (let j = rnd(12); j > 0; j--) bytes.push(rnd(4) === 0 ? rnd(256) : common[rnd(common.length)])
        inputs.push(bytes)
      }
      const out = []
      for (const label of ${JSON.stringify(WHATWG_AS_NODE)}) {
        try { new TextDecoder(label) } catch (e) { out.push(label, e.code); continue }
        for (const input of inputs) {
          const bytes = new Uint8Array(input)
          const streamed = new TextDecoder(label)
          let text = ''
          for (let i = 0; i < bytes.length; i++) text += streamed.decode(bytes.subarray(i, i + 1), { stream: true })
          let fatal
          try { fatal = new TextDecoder(label, { fatal: true }).decode(bytes) } catch (e) { fatal = e.code + ': ' + e.message }
          out.push(new TextDecoder(label).decode(bytes), text + streamed.decode(), fatal)
        }
      }
      return out
    }`)
  })

  it('keep a stream across calls: an incomplete sequence waits, a flush ends it, a failure resets it', async () => {
    await same(`() => {
      const out = []
      const d = new TextDecoder()
      out.push(d.decode(new Uint8Array([0xff, 0xdf]), { stream: true }), d.decode(new Uint8Array([0x9f])))
      const u16 = new TextDecoder('utf-16le')
      out.push(u16.decode(new Uint8Array([0xff, 0xfe, 0x41]), { stream: true }), u16.decode(new Uint8Array([0]), { stream: true }),
        u16.decode(new Uint8Array([0xff, 0xfe, 0x3d, 0xd8])), u16.decode(new Uint8Array([0xff, 0xfe, 0x42, 0])))
      const fatal = new TextDecoder('utf-8', { fatal: true })
      out.push(fatal.decode(new Uint8Array([0xe2, 0x82]), { stream: true }))
      try { fatal.decode(new Uint8Array([0x41])) } catch (e) { out.push(e.code, e.message) }
      out.push(fatal.decode(new Uint8Array([0x42])))
      const jis = new TextDecoder('iso-2022-jp')
      out.push(jis.decode(new Uint8Array([0x1b, 0x24]), { stream: true }), jis.decode(new Uint8Array([0x42, 0x24, 0x22]), { stream: true }), jis.decode())
      // Node names the argument "list" on its whole-input UTF-8 path (how it words the other
      // paths' message varies with the major and the encoding; these three agree on all four).
      for (const label of ['utf-8', 'utf-16le', 'shift_jis']) {
        const bad = new TextDecoder(label)
        for (const input of [null, 'ab', 7, {}]) { try { bad.decode(input); out.push('decoded') } catch (e) { out.push(e.name, e.code, e.message) } }
      }
      const big = new TextDecoder('utf-16be').decode(new Uint8Array(300000).fill(0x20))
      out.push(big.length, big === '\\u2020'.repeat(150000))
      return out
    }`)
  })

  it('follow the standard where Node\'s ICU tables differ from it (ICU drops or replaces these bytes)', async () => {
    const decoded = await value(`return [
      new TextDecoder('shift_jis').decode(new Uint8Array([0x82, 0xa0, 0x80, 0x5c])),
      new TextDecoder('euc-kr').decode(new Uint8Array([0xb0, 0xa1, 0x80])),
      new TextDecoder('big5').decode(new Uint8Array([0xa4, 0x40, 0x80])),
      new TextDecoder('euc-jp').decode(new Uint8Array([0xa4, 0xa2, 0x8e, 0xb1])),
      new TextDecoder('gbk').decode(new Uint8Array([0x80])),
      new TextDecoder('windows-874').decode(new Uint8Array([0xdb, 0x41])),
      // Node 20 drops 0x80-0x9f here; 22 and later decode them.
      new TextDecoder('windows-1252').decode(new Uint8Array([0, 0x80, 0x41, 0x9f, 0xa1])),
    ]`)
    expect(decoded).toEqual(['あ\u0080\\', '가\ufffd', '一\ufffd', 'あｱ', '€', '\ufffdA', '\u0000€AŸ¡'])
  })

  it('print their encoding like Node', async () => {
    const { logs } = await runtime.run({ program: "console.log(new TextDecoder('latin1', { fatal: true })); console.log(new TextDecoder('utf-16'))", bindings: [] })
    const { inspect } = await import('node:util')
    expect(logs).toEqual([inspect(new TextDecoder('latin1', { fatal: true })), inspect(new TextDecoder('utf-16'))])
  })
})

describe('atob and btoa', () => {
  it('follow the forgiving-base64 rules like Node', async () => {
    await same(`() => {
      const out = [btoa('hi'), atob('aGk='), atob(' aG k '), atob('aGk'), btoa(''), atob(''), btoa(String.fromCharCode(0, 255, 128)), atob('AP+A')]
      // Node reports a lone sixth before padding that does not fit ('a=' is "not correctly encoded").
      for (const bad of ['a', 'aGk==', 'a-b_', '€', 'ab=c', 'a===', 'ab=', 'abcde', 'a=', 'a ==', 'ab= =', 'abcd==', 'a*=', '\\ud800=']) { try { atob(bad); out.push('decoded ' + bad) } catch (e) { out.push(e.name, e.message, e.code) } }
      try { btoa('€') } catch (e) { out.push(e.name, e.message, e.code) }
      try { atob() } catch (e) { out.push(e.name, e.code, e.message) }
      try { btoa() } catch (e) { out.push(e.name, e.code, e.message) }
      return out
    }`)
  })
})

describe('URL and URLSearchParams', () => {
  it('parse and serialize per WHATWG like Node', async () => {
    await same(`() => {
      const out = []
      for (const [input, base] of [['https://a.b/c?d=1'], ['HTTP://EXAMPLE.com:80/./a/../b?q#h'], ['/x?y#z', 'https://h.io/p/q'],
        ['https://user:pa ss@münchen.de:8080/p a/t?x=1 2#f g'], ['file:///tmp/a b'], ['blob:https://a.b/uuid'], ['mailto:a@b.c'],
        ['https://[::1]:3000/'], ['http://192.168.0.1/'], ['https://a.b/%zz?%%']]) {
        const u = base === undefined ? new URL(input) : new URL(input, base)
        out.push([u.href, u.origin, u.protocol, u.username, u.password, u.host, u.hostname, u.port, u.pathname, u.search, u.hash, String(u), u.toJSON()])
      }
      try { new URL('nope') } catch (e) { out.push(e.name, e.code, e.message, e.input) }
      out.push(URL.canParse('https://x'), URL.canParse('x'), URL.canParse('x', 'https://y'))
      return out
    }`)
  })

  it('apply setters and keep searchParams in sync like Node', async () => {
    await same(`() => {
      const u = new URL('https://a.b/c?x=1&y=2#h')
      const p = u.searchParams
      p.append('z', 'a b&c')
      p.set('x', '9'); p.delete('y')
      const after = u.href
      u.search = '?k=v&k=w'
      const all = p.getAll('k')
      u.pathname = '/new path'; u.hash = 'frag'; u.port = '8443'; u.hostname = 'example.org'; u.protocol = 'http'
      u.username = 'me'; u.password = 'secret'; u.port = 'nope'
      u.search = ''
      return [after, all, u.href, p.toString(), p.size]
    }`)
  })

  it('implements the URLSearchParams methods like Node', async () => {
    await same(`() => {
      const out = []
      const p = new URLSearchParams('?b=2&a=1&b=3&c=%20x+y')
      out.push(p.get('b'), p.getAll('b'), p.has('a'), p.has('b', '3'), p.has('b', '9'), p.get('missing'), p.get('c'), p.size)
      p.sort(); out.push(p.toString())
      p.delete('b', '2'); out.push(p.toString())
      out.push([...p], [...p.keys()], [...p.values()], [...p.entries()])
      const seen = []; p.forEach((v, k) => seen.push(k + '=' + v)); out.push(seen)
      out.push(new URLSearchParams({ x: 1, y: 'two' }).toString(), new URLSearchParams([['a', 'b'], ['c', 'd']]).toString())
      out.push(new URLSearchParams(new Map([['m', 'n']])).toString(), new URLSearchParams('a=1&a=2&').toString())
      out.push(new URLSearchParams('é=ü&sp ace=x').toString())
      try { new URLSearchParams([['a']]) } catch (e) { out.push(e.name, e.code) }
      return out
    }`)
  })

  it('prints like Node', async () => {
    const logs = (await runtime.run({
      program: "console.log(new URL('https://a.b/c?d=1')); console.log(new URLSearchParams('a=1&b=2')); console.log(new TextEncoder(), new TextDecoder()); console.log({ u: new URL('http://x') }); console.log(new URLSearchParams())",
      bindings: [],
    })).logs
    const { inspect, formatWithOptions } = await import('node:util')
    const options = { depth: 4, maxArrayLength: 100, maxStringLength: 10000, breakLength: 80 }
    void inspect
    expect(logs).toEqual([
      formatWithOptions(options, new URL('https://a.b/c?d=1')),
      formatWithOptions(options, new URLSearchParams('a=1&b=2')),
      formatWithOptions(options, new TextEncoder(), new TextDecoder()),
      formatWithOptions(options, { u: new URL('http://x') }),
      formatWithOptions(options, new URLSearchParams()),
    ])
  })
})

describe('crypto', () => {
  it('fills integer typed arrays with random values, within the quota', async () => {
    const result = await value(`const out = []
      const a = new Uint8Array(64); const same = crypto.getRandomValues(a)
      out.push(same === a, a.some((x) => x !== 0))
      out.push(crypto.getRandomValues(new BigUint64Array(2)).length, crypto.getRandomValues(new Int32Array(16384)).length)
      for (const bad of [new Float32Array(1), new DataView(new ArrayBuffer(1)), [1, 2], new Uint8Array(65537)]) {
        try { crypto.getRandomValues(bad); out.push('filled') } catch (e) { out.push(e.name, e.message) }
      }
      return out`)
    expect(result).toEqual([
      true, true, 2, 16384,
      'TypeMismatchError', 'The data argument must be an integer-type TypedArray',
      'TypeMismatchError', 'The data argument must be an integer-type TypedArray',
      'TypeMismatchError', 'The data argument must be an integer-type TypedArray',
      'QuotaExceededError', 'The requested length exceeds 65,536 bytes',
    ])
  })

  it('makes lowercase v4 UUIDs, all different', async () => {
    const uuids = await value('return Array.from({ length: 200 }, () => crypto.randomUUID())')
    for (const uuid of uuids) expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(new Set(uuids).size).toBe(200)
  })
})

describe('structuredClone', () => {
  it('clones with V8 serializer semantics', async () => {
    const result = await value(`const m = new Map([[1, { a: [1] }]]); const s = new Set(['x'])
      const src = { m, s, d: new Date(5), r: /a+/gi, t: new Uint16Array([1, 2]), n: null, u: undefined, big: 10n }
      src.self = src
      const c = structuredClone(src)
      return [c !== src, c.self === c, c.m instanceof Map, c.m.get(1).a[0], c.s.has('x'), c.d.getTime(), c.r.source + c.r.flags,
        c.t instanceof Uint16Array, Array.from(c.t), 'u' in c, typeof c.big, c.m.get(1) !== m.get(1)]`)
    expect(result).toEqual([true, true, true, 1, true, 5, 'a+gi', true, [1, 2], true, 'bigint', true])
  })

  it('throws DataCloneError for functions and symbols like Node', async () => {
    await same(`() => {
      const out = []
      for (const bad of [() => 1, Symbol('s'), { f() {} }]) {
        try { structuredClone(bad); out.push('cloned') } catch (e) { out.push(e.name, e.code, e.message, e instanceof Error) }
      }
      return out
    }`)
    expect(await value('return JSON.stringify(structuredClone({ a: [1] }))')).toBe('{"a":[1]}')
  })
})

describe('performance', () => {
  it('gives monotonic fractional milliseconds since the isolate started', async () => {
    const [first, ticks] = await value(`const t = []; for (let i = 0; i < 1000; i++) t.push(performance.now())
      return [t[0], t.every((x, i) => i === 0 || x >= t[i - 1])]`)
    expect(first).toBeGreaterThanOrEqual(0)
    expect(first).toBeLessThan(1000)
    expect(ticks).toBe(true)
  })
})

describe('after the program mutates every built-in', () => {
  it('the web globals behave the same', async () => {
    const { MUTATIONS } = await import('./console-corpus.mjs')
    const program = `
      const input = { view: new Uint8Array([0xe2, 0x82, 0xac, 0x41]), into: new Uint8Array(4), odd: new Uint8Array([0xf0, 0x9f]),
        big: new Uint8Array(70000), floats: new Float64Array(1), small: new Uint32Array(4), tail: new Uint8Array([0x98, 0x80]) }
      function battery() {
        const enc = new TextEncoder()
        const dec = new TextDecoder()
        const encoded = enc.encode('€ a\\uD800 😀')
        const r = enc.encodeInto('😀ab', input.into)
        const streaming = new TextDecoder()
        const u = new URL('https://a.b/c?d=1#h')
        u.searchParams.append('e', '2 3')
        u.pathname = '/x y'
        const p = new URLSearchParams('b=2&a=1&b=3')
        p.sort()
        p.delete('a')
        const clone = structuredClone({ a: [1, { b: 2 }], s: 'x' })
        const out = {
          encoded: dec.decode(encoded), read: r.read, written: r.written, into: dec.decode(input.into), viewText: dec.decode(input.view),
          stream: streaming.decode(input.odd, { stream: true }) + '|' + streaming.decode(input.tail),
          href: u.href, search: u.search, params: p.toString(), size: p.size, got: p.get('b'), all: p.getAll('b'),
          clone: clone.a[1].b + clone.s, b64: btoa('hi') + atob('aGk='), uuid: crypto.randomUUID().length,
        }
        try { atob('*') } catch (e) { out.atob = e.name + ': ' + e.message }
        try { crypto.getRandomValues(input.big) } catch (e) { out.quota = e.name }
        try { crypto.getRandomValues(input.floats) } catch (e) { out.type = e.name }
        out.filled = crypto.getRandomValues(input.small) === input.small
        try { structuredClone(() => 1) } catch (e) { out.clone = e.name + ': ' + e.message }
        try { new URL('nope') } catch (e) { out.url = e.code }
        console.log(u)
        console.log(p, enc, dec)
        return out
      }
      const before = battery()
      ${MUTATIONS}
      const after = battery()
      return { before, after }`
    const result = await runtime.run({ program, bindings: [] })
    expect(result.error).toBeUndefined()
    expect(result.value.after).toEqual(result.value.before)
    expect(result.value.before.href).toBe('https://a.b/x%20y?d=1&e=2+3#h')
    expect(result.logs.slice(2)).toEqual(result.logs.slice(0, 2))
  })
})
