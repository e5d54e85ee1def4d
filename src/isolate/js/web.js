// The web-standard globals (docs/typescript.md#web-globals), built once per isolate before the
// program runs, on natives from src/isolate/web.rs. Everything used later is captured now, so a
// program replacing globals or prototype methods cannot change how these behave.
(function (natives) {
  'use strict';
  const {
    utf8Length, encodeInto, encodingFor, textDecode, streamOpen, base64Encode, base64Decode, urlParse, urlSet, formParse,
    formSerialize, randomFill, randomUUID, cloneValue, defineCustomInspect,
  } = natives;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const StringCtor = String;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectFreeze = Object.freeze;
  const ObjectKeys = Object.keys;
  const ReflectApply = Reflect.apply;
  const SymbolIterator = Symbol.iterator;
  const SymbolToStringTag = Symbol.toStringTag;
  const ArrayBufferIsView = ArrayBuffer.isView;
  const Uint8ArrayCtor = Uint8Array;
  const StringPrototypeCharCodeAt = String.prototype.charCodeAt;
  const StringPrototypeSlice = String.prototype.slice;
  const ArrayPrototypePush = Array.prototype.push;
  const GeneratorNext = Object.getPrototypeOf(function* () {}).prototype.next;

  const push = (list, ...items) => ReflectApply(ArrayPrototypePush, list, items);
  // Not Array.prototype.splice: it consults the program-replaceable Symbol.species.
  const removeAt = (list, index) => {
    for (let i = index; i + 1 < list.length; i++) list[i] = list[i + 1];
    list.length -= 1;
  };

  function hidden(target, key, value) {
    ObjectDefineProperty(target, key, { __proto__: null, value, writable: true, enumerable: false, configurable: true });
  }

  function methods(proto, table) {
    const keys = ObjectKeys(table);
    for (let i = 0; i < keys.length; i++) hidden(proto, keys[i], table[keys[i]]);
  }

  function getter(proto, name, get) {
    ObjectDefineProperty(proto, name, { __proto__: null, get, enumerable: true, configurable: true });
  }

  function tag(proto, name) {
    ObjectDefineProperty(proto, SymbolToStringTag, { __proto__: null, value: name, configurable: true });
  }

  // DOMException as Node throws it (not a global of the program: see docs/typescript.md#globals).
  const CODES = { __proto__: null, InvalidCharacterError: 5, DataCloneError: 25, QuotaExceededError: 22, TypeMismatchError: 17 };
  class DOMException extends ErrorCtor {
    constructor(message = '', name = 'Error') {
      super(message);
      hidden(this, 'name', StringCtor(name));
      hidden(this, 'code', CODES[name] ?? 0);
    }
  }

  function codedError(Ctor, code, message) {
    const error = new Ctor(message);
    hidden(error, 'code', code);
    return error;
  }

  // TextEncoder (UTF-8) / TextDecoder (the encodings Node accepts, on encoding_rs).
  class TextEncoder {
    encode(input = '') {
      const text = StringCtor(input);
      const out = new Uint8ArrayCtor(utf8Length(text));
      encodeInto(text, out);
      return out;
    }

    encodeInto(source, destination) {
      if (!(destination instanceof Uint8ArrayCtor)) {
        throw codedError(TypeErrorCtor, 'ERR_INVALID_ARG_TYPE', 'The "dest" argument must be an instance of Uint8Array.');
      }
      const done = encodeInto(StringCtor(source), destination);
      return { read: done[0], written: done[1] };
    }
  }
  getter(TextEncoder.prototype, 'encoding', function encoding() { return 'utf-8'; });
  tag(TextEncoder.prototype, 'TextEncoder');

  const decoders = new WeakMap();
  const WeakMapGet = WeakMap.prototype.get;
  const WeakMapSet = WeakMap.prototype.set;
  const decoderState = (self) => {
    const state = ReflectApply(WeakMapGet, decoders, [self]);
    if (state === undefined) throw codedError(TypeErrorCtor, 'ERR_INVALID_THIS', 'Value of "this" must be of type TextDecoder');
    return state;
  };

  class TextDecoder {
    constructor(label = 'utf-8', options = undefined) {
      // [name, code], or [name] for an encoding Node resolves but refuses, or null for no
      // encoding. The code names the encoding to the natives.
      const found = encodingFor(StringCtor(label));
      if (found === null || found.length === 1) {
        const shown = found === null ? StringCtor(label) : found[0];
        throw codedError(RangeErrorCtor, 'ERR_ENCODING_NOT_SUPPORTED', `The "${shown}" encoding is not supported`);
      }
      const encoding = found[0];
      const code = found[1];
      const fatal = options != null && !!options.fatal;
      const ignoreBOM = options != null && !!options.ignoreBOM;
      // The private state is also the owner of a streaming decoder's native slot (`stream`, -1
      // when none is open).
      const state = { __proto__: null, encoding, code, fatal, ignoreBOM, stream: -1 };
      ReflectApply(WeakMapSet, decoders, [this, state]);
    }

    decode(input = undefined, options = undefined) {
      const state = decoderState(this);
      const stream = options != null && !!options.stream;
      if (stream && state.stream < 0) state.stream = streamOpen(state, state.code, state.ignoreBOM);
      // The native reads any buffer or view through V8 itself, so replaced typed-array getters
      // change nothing; null means invalid input when fatal, undefined an input that is not a
      // buffer source. A call that flushes, or fails, closes the stream.
      const text = textDecode(state, state.stream, state.code, input, state.fatal, state.ignoreBOM, stream);
      if (text === undefined) {
        throw codedError(TypeErrorCtor, 'ERR_INVALID_ARG_TYPE',
          // Node names the argument "list" on its whole-input UTF-8 path.
          `The "${state.encoding === 'utf-8' && !stream ? 'list' : 'input'}" argument must be an instance of SharedArrayBuffer, ArrayBuffer or ArrayBufferView.`);
      }
      if (!stream || text === null) state.stream = -1;
      if (text === null) {
        throw codedError(TypeErrorCtor, 'ERR_ENCODING_INVALID_ENCODED_DATA', `The encoded data was not valid for encoding ${state.encoding}`);
      }
      return text;
    }
  }
  getter(TextDecoder.prototype, 'encoding', function encoding() { return decoderState(this).encoding; });
  getter(TextDecoder.prototype, 'fatal', function fatal() { return decoderState(this).fatal; });
  getter(TextDecoder.prototype, 'ignoreBOM', function ignoreBOM() { return decoderState(this).ignoreBOM; });
  tag(TextDecoder.prototype, 'TextDecoder');

  // atob / btoa (HTML forgiving base64).
  function missing(name) {
    return codedError(TypeErrorCtor, 'ERR_MISSING_ARGS', `The "${name}" argument must be specified`);
  }

  function btoa(data) {
    if (arguments.length === 0) throw missing('input');
    const encoded = base64Encode(StringCtor(data));
    if (encoded === null) throw new DOMException('Invalid character', 'InvalidCharacterError');
    return encoded;
  }

  function atob(data) {
    if (arguments.length === 0) throw missing('input');
    const decoded = base64Decode(StringCtor(data));
    if (typeof decoded !== 'string') throw new DOMException(decoded[0], 'InvalidCharacterError');
    return decoded;
  }

  // URLSearchParams: name/value pairs, kept in sync with an owning URL's query.
  const paramsState = new WeakMap();
  const paramsOf = (self) => {
    const state = ReflectApply(WeakMapGet, paramsState, [self]);
    if (state === undefined) throw codedError(TypeErrorCtor, 'ERR_INVALID_THIS', 'Value of "this" must be of type URLSearchParams');
    return state;
  };

  function parsePairs(query) {
    const flat = formParse(query);
    const list = [];
    for (let i = 0; i + 1 < flat.length; i += 2) push(list, [flat[i], flat[i + 1]]);
    return list;
  }

  function serializePairs(list) {
    const flat = [];
    for (let i = 0; i < list.length; i++) push(flat, list[i][0], list[i][1]);
    return formSerialize(flat);
  }

  function nextFromGenerator(generator) {
    return ReflectApply(GeneratorNext, generator, []);
  }

  class URLSearchParams {
    constructor(init = undefined) {
      const state = { list: [], url: null };
      ReflectApply(WeakMapSet, paramsState, [this, state]);
      if (init === undefined || init === null) return;
      if (typeof init === 'object' || typeof init === 'function') {
        const iteratorMethod = init[SymbolIterator];
        if (iteratorMethod !== undefined) {
          if (typeof iteratorMethod !== 'function') throw new TypeErrorCtor('Query pairs must be iterable');
          const iterator = ReflectApply(iteratorMethod, init, []);
          for (;;) {
            const step = iterator.next();
            if (step.done) break;
            const pair = step.value;
            if (pair === null || (typeof pair !== 'object' && typeof pair !== 'function')) {
              throw codedError(TypeErrorCtor, 'ERR_INVALID_TUPLE', 'Each query pair must be an iterable [name, value] tuple');
            }
            const items = [];
            const pairIterator = ReflectApply(pair[SymbolIterator], pair, []);
            for (;;) {
              const item = pairIterator.next();
              if (item.done) break;
              push(items, item.value);
            }
            if (items.length !== 2) {
              throw codedError(TypeErrorCtor, 'ERR_INVALID_TUPLE', 'Each query pair must be an iterable [name, value] tuple');
            }
            push(state.list, [StringCtor(items[0]), StringCtor(items[1])]);
          }
        } else {
          const keys = ObjectKeys(init);
          for (let i = 0; i < keys.length; i++) push(state.list, [keys[i], StringCtor(init[keys[i]])]);
        }
        state.list = parsePairs(serializePairs(state.list));
        return;
      }
      let query = StringCtor(init);
      if (ReflectApply(StringPrototypeCharCodeAt, query, [0]) === 0x3f) query = ReflectApply(StringPrototypeSlice, query, [1]);
      state.list = parsePairs(query);
    }

    append(name, value) {
      const state = paramsOf(this);
      if (arguments.length < 2) throw missing(arguments.length === 0 ? 'name' : 'value');
      push(state.list, [usv(name), usv(value)]);
      update(state);
    }

    delete(name, value = undefined) {
      const state = paramsOf(this);
      if (arguments.length < 1) throw missing('name');
      const key = usv(name);
      const match = value === undefined ? null : usv(value);
      for (let i = state.list.length - 1; i >= 0; i--) {
        if (state.list[i][0] === key && (match === null || state.list[i][1] === match)) {
          removeAt(state.list, i);
        }
      }
      update(state);
    }

    get(name) {
      const state = paramsOf(this);
      if (arguments.length < 1) throw missing('name');
      const key = usv(name);
      for (let i = 0; i < state.list.length; i++) if (state.list[i][0] === key) return state.list[i][1];
      return null;
    }

    getAll(name) {
      const state = paramsOf(this);
      if (arguments.length < 1) throw missing('name');
      const key = usv(name);
      const out = [];
      for (let i = 0; i < state.list.length; i++) if (state.list[i][0] === key) push(out, state.list[i][1]);
      return out;
    }

    has(name, value = undefined) {
      const state = paramsOf(this);
      if (arguments.length < 1) throw missing('name');
      const key = usv(name);
      const match = value === undefined ? null : usv(value);
      for (let i = 0; i < state.list.length; i++) {
        if (state.list[i][0] === key && (match === null || state.list[i][1] === match)) return true;
      }
      return false;
    }

    set(name, value) {
      const state = paramsOf(this);
      if (arguments.length < 2) throw missing(arguments.length === 0 ? 'name' : 'value');
      const key = usv(name);
      const val = usv(value);
      let found = false;
      for (let i = 0; i < state.list.length; i++) {
        if (state.list[i][0] !== key) continue;
        if (!found) {
          state.list[i][1] = val;
          found = true;
        } else {
          removeAt(state.list, i);
          i--;
        }
      }
      if (!found) push(state.list, [key, val]);
      update(state);
    }

    sort() {
      const state = paramsOf(this);
      // A stable insertion sort by UTF-16 code units of the names, as the standard requires.
      const list = state.list;
      for (let i = 1; i < list.length; i++) {
        const item = list[i];
        let j = i - 1;
        while (j >= 0 && list[j][0] > item[0]) {
          list[j + 1] = list[j];
          j--;
        }
        list[j + 1] = item;
      }
      update(state);
    }

    forEach(callback, thisArg = undefined) {
      const state = paramsOf(this);
      if (typeof callback !== 'function') {
        throw codedError(TypeErrorCtor, 'ERR_INVALID_ARG_TYPE', 'The "callback" argument must be of type function');
      }
      for (let i = 0; i < state.list.length; i++) {
        ReflectApply(callback, thisArg, [state.list[i][1], state.list[i][0], this]);
      }
    }

    *keys() {
      const state = paramsOf(this);
      for (let i = 0; i < state.list.length; i++) yield state.list[i][0];
    }

    *values() {
      const state = paramsOf(this);
      for (let i = 0; i < state.list.length; i++) yield state.list[i][1];
    }

    *entries() {
      const state = paramsOf(this);
      for (let i = 0; i < state.list.length; i++) yield [state.list[i][0], state.list[i][1]];
    }

    toString() {
      return serializePairs(paramsOf(this).list);
    }
  }
  hidden(URLSearchParams.prototype, SymbolIterator, URLSearchParams.prototype.entries);
  getter(URLSearchParams.prototype, 'size', function size() { return paramsOf(this).list.length; });
  tag(URLSearchParams.prototype, 'URLSearchParams');
  void nextFromGenerator;

  function usv(value) {
    return StringCtor(value);
  }

  // URL: WHATWG parsing and setters from the `url` crate; the components are cached per object.
  const FIELDS = ['href', 'origin', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash'];
  const urlState = new WeakMap();
  const urlOf = (self) => {
    const state = ReflectApply(WeakMapGet, urlState, [self]);
    if (state === undefined) throw codedError(TypeErrorCtor, 'ERR_INVALID_THIS', 'Value of "this" must be of type URL');
    return state;
  };

  function invalidUrl(input) {
    const error = codedError(TypeErrorCtor, 'ERR_INVALID_URL', 'Invalid URL');
    hidden(error, 'input', input);
    return error;
  }

  function update(paramsStateValue) {
    const owner = paramsStateValue.url;
    if (owner === null) return;
    const query = serializePairs(paramsStateValue.list);
    const next = urlSet(owner.parts[0], 'search', query);
    if (next !== null) owner.parts = next;
    if (query === '') {
      // An empty query leaves no `?` behind, as in Node.
      const cleared = urlSet(owner.parts[0], 'search', '');
      if (cleared !== null) owner.parts = cleared;
    }
  }

  class URL {
    constructor(input, base = undefined) {
      if (arguments.length === 0) throw missing('url');
      const text = usv(input);
      const parts = base === undefined ? urlParse(text) : urlParse(text, usv(base));
      if (parts === null) throw invalidUrl(text);
      ReflectApply(WeakMapSet, urlState, [this, { parts, params: null }]);
    }

    static canParse(input, base = undefined) {
      if (arguments.length === 0) throw missing('url');
      return (base === undefined ? urlParse(usv(input)) : urlParse(usv(input), usv(base))) !== null;
    }

    toString() {
      return urlOf(this).parts[0];
    }

    toJSON() {
      return urlOf(this).parts[0];
    }
  }
  for (let i = 0; i < FIELDS.length; i++) {
    const field = FIELDS[i];
    const index = i;
    const descriptor = {
      __proto__: null,
      enumerable: true,
      configurable: true,
      get: { [field]() { return urlOf(this).parts[index]; } }[field],
    };
    if (field !== 'origin') {
      descriptor.set = { [field](value) {
        const state = urlOf(this);
        const next = urlSet(state.parts[0], field, usv(value));
        if (next === null) {
          if (field === 'href') throw invalidUrl(usv(value));
          return;
        }
        state.parts = next;
        if (state.params !== null && (field === 'href' || field === 'search')) {
          paramsOf(state.params).list = parsePairs(ReflectApply(StringPrototypeSlice, next[9], [1]));
        }
      } }[field];
    }
    ObjectDefineProperty(URL.prototype, field, descriptor);
  }
  function searchParamsOf(state) {
    if (state.params === null) {
      const params = new URLSearchParams(ReflectApply(StringPrototypeSlice, state.parts[9], [1]));
      paramsOf(params).url = state;
      state.params = params;
    }
    return state.params;
  }
  getter(URL.prototype, 'searchParams', function searchParams() {
    return searchParamsOf(urlOf(this));
  });
  tag(URL.prototype, 'URL');

  // How Node's util.inspect shows these classes (each one's own inspection hook, ported). The
  // objects shown get own data properties by definition, so no setter of the program runs.
  const plainWithConstructor = (constructor) => ({ __proto__: { constructor } });
  const set = (target, key, value) => {
    ObjectDefineProperty(target, key, { __proto__: null, value, writable: true, enumerable: true, configurable: true });
  };
  const visible = (depth) => !(typeof depth === 'number' && depth < 0);
  defineCustomInspect(TextEncoder.prototype, function inspectTextEncoder(depth, options, inspect) {
    if (!visible(depth)) return this;
    const shown = plainWithConstructor(TextEncoder);
    set(shown, 'encoding', 'utf-8');
    return inspect(shown, options);
  });
  defineCustomInspect(TextDecoder.prototype, function inspectTextDecoder(depth, options, inspect) {
    const state = decoderState(this);
    if (!visible(depth)) return this;
    const shown = plainWithConstructor(TextDecoder);
    set(shown, 'encoding', state.encoding);
    set(shown, 'fatal', state.fatal);
    set(shown, 'ignoreBOM', state.ignoreBOM);
    return `TextDecoder ${inspect(shown)}`;
  });
  defineCustomInspect(URL.prototype, function inspectURL(depth, options, inspect) {
    const state = urlOf(this);
    if (!visible(depth)) return this;
    const shown = plainWithConstructor(URL);
    for (let i = 0; i < FIELDS.length; i++) {
      if (FIELDS[i] === 'hash') set(shown, 'searchParams', searchParamsOf(state));
      set(shown, FIELDS[i], state.parts[i]);
    }
    return `URL ${inspect(shown, options)}`;
  });
  defineCustomInspect(URLSearchParams.prototype, function inspectURLSearchParams(depth, options, inspect) {
    const list = paramsOf(this).list;
    if (!visible(depth)) return '[Object]';
    const inner = { ...options };
    if (depth !== null) set(inner, 'depth', depth - 1);
    const entries = [];
    let width = -2;
    for (let i = 0; i < list.length; i++) {
      const entry = `${inspect(list[i][0], inner)} => ${inspect(list[i][1], inner)}`;
      push(entries, entry);
      width += entry.length + 2;
    }
    if (entries.length === 0) return 'URLSearchParams {}';
    let body = entries[0];
    const separator = width > options.breakLength ? ',\n  ' : ', ';
    for (let i = 1; i < entries.length; i++) body += separator + entries[i];
    return width > options.breakLength ? `URLSearchParams {\n  ${body} }` : `URLSearchParams { ${body} }`;
  });

  // crypto.getRandomValues / crypto.randomUUID.
  class Crypto {}
  const crypto = new Crypto();
  methods(Crypto.prototype, {
    getRandomValues(typedArray) {
      if (arguments.length === 0) throw missing('typedArray');
      // The native checks the type and the quota through V8: 0 filled, 1 not an integer typed
      // array, 2 over 65536 bytes.
      const outcome = randomFill(typedArray);
      if (outcome === 1) throw new DOMException('The data argument must be an integer-type TypedArray', 'TypeMismatchError');
      if (outcome === 2) throw new DOMException('The requested length exceeds 65,536 bytes', 'QuotaExceededError');
      return typedArray;
    },
    randomUUID() {
      return randomUUID();
    },
  });
  tag(Crypto.prototype, 'Crypto');

  // structuredClone with V8's serializer semantics.
  function structuredClone(value, options = undefined) {
    if (arguments.length === 0) throw missing('value');
    if (options !== undefined && options !== null && typeof options !== 'object') {
      throw codedError(TypeErrorCtor, 'ERR_INVALID_ARG_TYPE', 'The "options" argument must be of type object.');
    }
    const result = cloneValue(value);
    if (result === undefined) throw new DOMException('value could not be cloned.', 'DataCloneError');
    if (!result[0]) throw new DOMException(result[1], 'DataCloneError');
    return result[1];
  }

  return ObjectFreeze({
    __proto__: null,
    TextEncoder, TextDecoder, atob, btoa, URL, URLSearchParams, crypto, structuredClone, DOMException,
  });
})
