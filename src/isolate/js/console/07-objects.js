  // 07-objects.js: a fragment of the body of the one function the files of parts.txt join into, in
  // its order (README.md): objects: formatValue, formatRaw, constructor names, prefixes, keys.

  // =========================================================================
  // 6. Objects
  // =========================================================================

  // How the entries of an object are laid out.
  const AS_PROPERTIES = 0;    // "key: value" entries
  const AS_ELEMENTS = 1;      // array elements (no key shown)
  const AS_ARRAY_EXTRAS = 2;  // array-like: elements then "key: value" extras

  // Node's formatValue (lib/internal/util/inspect.js), as of 20.x-26.x; differs: never calls Proxy traps or util.inspect.custom (only runtime-registered inspectors)
  function formatValue(st, value, level, fromTypedArray) {
    if (typeof value !== 'object' && typeof value !== 'function') {
      return formatPrimitive(st.paint, value, st);
    }
    if (value === null) return st.paint('null', 'null');

    let kind = nTypeTag(value);
    let proxies = 0;  // Node 26+: how many "Proxy(...)" wrap the target's text
    if (kind === T_PROXY) {
      if (st.showProxy) return formatProxy(st, value, level);
      if (nodeMajor >= 26) {
        do {
          value = nProxyTarget(value);
          if (value === null) return wrapInProxy(st, st.paint('<Revoked Proxy>', 'special'), proxies);
          proxies++;
        } while (nTypeTag(value) === T_PROXY);
      } else {
        value = unwrapProxy(value);
        if (value === null) return st.paint('<Revoked Proxy>', 'special');
      }
      kind = nTypeTag(value);
    }

    if (customInspectors !== undefined) {
      const hook = findCustomInspector(value);
      if (hook !== undefined) {
        const result = ReflectApply(hook, value, [st.depth - level, getUserOptions(st), inspectForHooks]);
        if (result !== value) {
          if (typeof result === 'string') {
            return replaceNewlines(result, `\n${StringPrototypeRepeat(' ', st.indent)}`);
          }
          return formatValue(st, result, level, false);
        }
      }
    }

    if (listIncludes(st.stack, value)) {
      return st.paint(`[Circular *${referenceNumber(st, value)}]`, 'special');
    }
    const text = formatRaw(st, value, level, fromTypedArray, kind);
    return proxies === 0 ? text : wrapInProxy(st, text, proxies);
  }

  function wrapInProxy(st, text, times) {
    for (let i = 0; i < times; i++) text = `${st.paint('Proxy(', 'special')}${text}${st.paint(')', 'special')}`;
    return text;
  }

  // Reference numbers are handed out in the order cycles are discovered.
  function referenceNumber(st, value) {
    if (st.refs === undefined) st.refs = new MapCtor();
    let id = MapPrototypeGet(st.refs, value);
    if (id === undefined) {
      id = MapPrototypeGetSize(st.refs) + 1;
      MapPrototypeSet(st.refs, value, id);
    }
    return id;
  }

  // showProxy: `Proxy [ target, handler ]`.
  // Node's formatProxy (lib/internal/util/inspect.js), as of 20.x-26.x; differs: never runs traps
  function formatProxy(st, proxy, level) {
    const target = nProxyTarget(proxy);
    if (target === null) return st.paint('<Revoked Proxy>', 'special');
    const handler = nProxyHandler(proxy);
    if (level > st.depth) return st.paint('Proxy [Array]', 'special');
    st.indent += 2;
    const parts = newList();
    push(parts, formatValue(st, target, level + 1, false));
    push(parts, formatValue(st, handler, level + 1, false));
    st.indent -= 2;
    return reduceToSingleString(st, parts, '', 'Proxy [', ']', AS_ARRAY_EXTRAS, level + 1, undefined);
  }

  // The label before an object's brace: "Foo ", "Foo [tag] ", "Foo(3) ",
  // "[Foo(3): null prototype] [tag] ".
  // Node's getPrefix (lib/internal/util/inspect.js), as of 20.x-26.x; the tag rule of each (22 and 24 changed it)
  function getPrefix(ctor, tag, fallback, size) {
    if (size === undefined) size = '';
    if (ctor === null) {
      const nullLabel = `[${fallback}${size}: null prototype] `;
      return tag !== '' && tag !== fallback ? `${nullLabel}[${tag}] ` : nullLabel;
    }
    if (tag === '') return `${ctor}${size} `;
    if (nodeMajor >= 24) {
      // A tag whose last dotted segment is the constructor's name replaces it.
      const dot = StringPrototypeLastIndexOf(tag, '.');
      if (ctor === (dot >= 1 ? StringPrototypeSlice(tag, dot + 1) : tag)) return `${tag}${size} `;
      return `${ctor}${size} [${tag}] `;
    }
    if (nodeMajor >= 22) {
      // Not shown when the constructor's name contains it, unless a lower
      // case character (or a non-letter) follows it there: "MyMap", "MapX".
      const at = StringPrototypeIndexOf(ctor, tag);
      if (at === -1) return `${ctor}${size} [${tag}] `;
      const end = at + tag.length;
      if (end !== ctor.length) {
        const next = ctor[end];
        if (next === StringPrototypeToLowerCase(next)) return `${ctor}${size} [${tag}] `;
      }
      return `${ctor}${size} `;
    }
    return tag !== ctor ? `${ctor}${size} [${tag}] ` : `${ctor}${size} `;
  }

  // getPrefix() for an object of no special kind.
  // Node's getCtxStyle (lib/internal/util/inspect.js), as of 20.x-26.x
  function getCtxStyle(value, ctor, tag) {
    if (ctor !== null) return getPrefix(ctor, tag, '');
    const internal = nConstructorName(value);
    return getPrefix(ctor, tag, internal === tag ? 'Object' : internal);
  }

  // The name of the nearest constructor on the prototype chain that `value`
  // is an instance of (own `constructor` first); null for a null-prototype
  // object; for a chain without constructors, V8's name plus the first
  // prototype's description. With showHidden, user-defined prototype
  // properties are collected into `protoLines`.
  // Node's getConstructorName (lib/internal/util/inspect.js), as of 20.x-26.x; differs: `constructor` and its `name` read as data properties only (no getters), no Symbol.hasInstance
  function getConstructorName(st, value, level, protoLines) {
    let firstProto;
    let o = value;
    while (o !== null) {
      if (o !== value && (o === ObjectPrototype || o === FunctionPrototype)) {
        if (protoLines !== undefined && o !== firstProto) {
          addPrototypeProperties(st, value, firstProto || value, level, protoLines);
        }
        return o === ObjectPrototype ? 'Object' : 'Function';
      }
      const d = ObjectGetOwnPropertyDescriptor(o, 'constructor');
      if (d !== undefined && isDataDescriptor(d) && typeof d.value === 'function') {
        const C = d.value;
        const name = constructorFunctionName(C, value);
        if (name !== '' && isInstanceof(value, C, o)) {
          if (protoLines !== undefined && (o !== firstProto || !isBuiltinName(name))) {
            addPrototypeProperties(st, value, firstProto || value, level, protoLines);
          }
          return toStr(name);
        }
      }
      o = protoOf(o);
      if (firstProto === undefined) firstProto = o;
    }
    if (firstProto === null) return null;

    const internal = nConstructorName(value);
    if (level > st.depth) return `${internal} <Complex prototype>`;
    const protoName = getConstructorName(st, firstProto, level + 1, protoLines);
    if (protoName !== null) return `${internal} <${protoName}>`;
    const brief = copyOptions(st);
    brief.depth = -1;
    return `${internal} <${inspectWithOptions(firstProto, brief)}>`;
  }

  // showHidden: non-method properties of up to three user-defined prototype
  // levels (stopping at a built-in constructor's prototype), each key once.
  // Node's addPrototypeProperties (lib/internal/util/inspect.js), as of 20.x-26.x; differs: data properties only, no getters
  function addPrototypeProperties(st, main, start, level, into) {
    const shown = newList();
    let o = start;
    for (let layer = 0; layer < 3; layer++) {
      if (layer !== 0 || main === o) {
        o = protoOf(o);
        if (o === null) return;
        const d = ObjectGetOwnPropertyDescriptor(o, 'constructor');
        if (d !== undefined && isDataDescriptor(d) && typeof d.value === 'function' &&
            isBuiltinName(functionName(d.value))) {
          return;
        }
      }
      const keys = ReflectOwnKeys(o);
      const seenBefore = shown.length;
      push(st.stack, main);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        if (key === 'constructor' || ObjectPrototypeHasOwnProperty(main, key)) continue;
        let repeated = false;
        for (let k = 0; k < seenBefore; k++) {
          if (shown[k] === key) {
            repeated = true;
            break;
          }
        }
        if (repeated) continue;
        const d = ObjectGetOwnPropertyDescriptor(o, key);
        if (isDataDescriptor(d) && typeof d.value === 'function') continue;
        const line = formatProperty(st, o, level, key, AS_PROPERTIES, d, main);
        push(into, st.colors ? `\u001b[2m${line}\u001b[22m` : line);
      }
      st.stack.length--;
      for (let i = 0; i < keys.length; i++) push(shown, keys[i]);
    }
  }

  function listIncludes(list, v) {
    for (let i = 0; i < list.length; i++) if (list[i] === v) return true;
    return false;
  }
  function listIndexOf(list, v) {
    for (let i = 0; i < list.length; i++) if (list[i] === v) return i;
    return -1;
  }
  function listRemoveAt(list, index) {
    for (let i = index + 1; i < list.length; i++) list[i - 1] = list[i];
    list.length--;
  }
  function copyToList(src) {
    const out = newList();
    for (let i = 0; i < src.length; i++) push(out, src[i]);
    return out;
  }

  // Symbol.toStringTag when it is a string that is not already shown as an
  // own enumerable property (own at all, with showHidden); '' otherwise.
  function tagOf(value, showHidden) {
    const tag = lookupData(value, SymbolToStringTag);
    if (typeof tag !== 'string' || tag === '') return '';
    const own = showHidden ?
      ObjectPrototypeHasOwnProperty(value, SymbolToStringTag) :
      ObjectPrototypePropertyIsEnumerable(value, SymbolToStringTag);
    return own ? '' : tag;
  }

  // Own enumerable string keys then own enumerable symbols (all own keys with
  // showHidden). The result may be an array we must not write to.
  // Node's getKeys (lib/internal/util/inspect.js), as of 20.x-26.x
  function getKeys(value, all) {
    const symbols = ObjectGetOwnPropertySymbols(value);
    const names = all ? ObjectGetOwnPropertyNames(value) : ObjectKeys(value);
    if (symbols.length === 0) return names;
    const keys = copyToList(names);
    for (let i = 0; i < symbols.length; i++) {
      if (all || ObjectPrototypePropertyIsEnumerable(value, symbols[i])) push(keys, symbols[i]);
    }
    return keys;
  }

  // Where an object's entries come from.
  const E_NONE = 0;
  const E_ARRAY = 1;
  const E_SET = 2;
  const E_MAP = 3;
  const E_TYPED_ARRAY = 4;
  const E_ITERATOR = 5;
  const E_BUFFER = 6;
  const E_PROMISE = 7;
  const E_WEAK_SET = 8;
  const E_WEAK_MAP = 9;
  const E_WEAK_HIDDEN = 10;
  const E_NAMESPACE = 11;
  // Extra entries shown before the own keys.
  const X_NONE = 0;
  const X_BYTE_LENGTH = 1;
  const X_DATA_VIEW = 2;

  function isFunctionKind(kind) {
    return kind >= T_FUNCTION && kind <= T_ASYNC_GENERATOR_FUNCTION;
  }

  // Node's formatRaw (lib/internal/util/inspect.js), as of 20.x-26.x; differs: reads data properties only (no Symbol.toStringTag or other getters; `getters` as Node)
  function formatRaw(st, value, level, fromTypedArray, kind) {
    let protoLines;
    if (st.showHidden && level <= st.depth) protoLines = newList();
    const ctor = getConstructorName(st, value, level, protoLines);
    if (protoLines !== undefined && protoLines.length === 0) protoLines = undefined;
    const tag = tagOf(value, st.showHidden);
    const bare = protoLines === undefined;  // nothing from prototypes to show

    let keys;
    let head = '';          // text before the braces (functions, errors, ...)
    let open = '{';
    let close = '}';
    let entries = E_NONE;
    let mode = AS_PROPERTIES;
    let extra = X_NONE;
    let count = 0;          // Map/Set size, typed array length
    let capped = true;      // Map/Set: maxArrayLength applies

    if (kind === T_ARRAY) {
      keys = nOwnNonIndexKeys(value, !st.showHidden);
      const length = value.length;
      open = ctor === 'Array' && tag === '' ? '[' : `${getPrefix(ctor, tag, 'Array', `(${length})`)}[`;
      close = ']';
      if (length === 0 && keys.length === 0 && bare) return `${open}]`;
      entries = E_ARRAY;
      mode = AS_ARRAY_EXTRAS;
    } else if (kind === T_SET || kind === T_MAP) {
      const isSet = kind === T_SET;
      count = isSet ? SetPrototypeGetSize(value) : MapPrototypeGetSize(value);
      const label = getPrefix(ctor, tag, isSet ? 'Set' : 'Map', `(${count})`);
      keys = getKeys(value, st.showHidden);
      if (count === 0 && keys.length === 0 && bare) return `${label}{}`;
      open = `${label}{`;
      entries = isSet ? E_SET : E_MAP;
      // Node iterates a null-prototype Map/Set without a size, i.e. fully.
      capped = ctor !== null;
    } else if (kind === T_TYPED_ARRAY) {
      keys = nOwnNonIndexKeys(value, !st.showHidden);
      count = TypedArrayPrototypeGetLength(value);
      const fallback = ctor === null ? TypedArrayPrototypeGetSymbolToStringTag(value) : '';
      open = `${getPrefix(ctor, tag, fallback, `(${count})`)}[`;
      close = ']';
      // (Node reads `length`, which a null-prototype typed array lacks.)
      if (ctor !== null && count === 0 && keys.length === 0 && !st.showHidden) return `${open}]`;
      entries = E_TYPED_ARRAY;
      mode = AS_ARRAY_EXTRAS;
    } else if (kind === T_MAP_ITERATOR || kind === T_SET_ITERATOR) {
      keys = getKeys(value, st.showHidden);
      const own = kind === T_MAP_ITERATOR ? 'Map Iterator' : 'Set Iterator';
      open = `[${tag === own ? own : tag === '' ? own : `${tag}] [${own}`}] {`;
      entries = E_ITERATOR;
    } else {
      keys = getKeys(value, st.showHidden);
      const none = keys.length === 0 && bare;
      if (isFunctionKind(kind)) {
        head = getFunctionBase(st, value, ctor, tag, kind);
        if (none) return st.paint(head, 'special');
      } else if (ctor === 'Object') {
        if (kind === T_ARGUMENTS) open = '[Arguments] {';
        else if (tag !== '') open = `${getPrefix(ctor, tag, 'Object')}{`;
        if (none) return `${open}}`;
      } else if (kind === T_REGEXP) {
        head = regExpToString(value);
        const label = getPrefix(ctor, tag, 'RegExp');
        if (label !== 'RegExp ') head = label + head;
        if (nodeMajor >= 26) {
          // Node 26+ styles the regexp also when its properties follow.
          head = st.paint(head, 'regexp');
          if (none || level > st.depth) return head;
        } else if (none || level > st.depth) {
          return st.paint(head, 'regexp');
        }
      } else if (kind === T_DATE) {
        head = NumberIsNaN(DatePrototypeGetTime(value)) ?
          DatePrototypeToString(value) : DatePrototypeToISOString(value);
        const label = getPrefix(ctor, tag, 'Date');
        if (label !== 'Date ') head = label + head;
        if (none) return st.paint(head, 'date');
      } else if (kind === T_ERROR || isErrorValue(value)) {
        keys = copyToList(keys);
        head = formatError(value, ctor, tag, st, keys);
        if (keys.length === 0 && bare) return head;
      } else if (kind === T_ARRAY_BUFFER || kind === T_SHARED_ARRAY_BUFFER) {
        const label = getPrefix(ctor, tag, kind === T_ARRAY_BUFFER ? 'ArrayBuffer' : 'SharedArrayBuffer');
        if (fromTypedArray && none) {
          const key = nodeMajor >= 22 ? '[byteLength]' : 'byteLength';
          return `${label}{ ${key}: ${formatNumber(st.paint, bufferByteLength(value, kind), false)} }`;
        }
        if (!fromTypedArray) entries = E_BUFFER;
        open = `${label}{`;
        extra = X_BYTE_LENGTH;
      } else if (kind === T_DATA_VIEW) {
        open = `${getPrefix(ctor, tag, 'DataView')}{`;
        extra = X_DATA_VIEW;
      } else if (kind === T_PROMISE) {
        open = `${getPrefix(ctor, tag, 'Promise')}{`;
        entries = E_PROMISE;
      } else if (kind === T_WEAK_SET || kind === T_WEAK_MAP) {
        const isSet = kind === T_WEAK_SET;
        open = `${getPrefix(ctor, tag, isSet ? 'WeakSet' : 'WeakMap')}{`;
        entries = !st.showHidden ? E_WEAK_HIDDEN : isSet ? E_WEAK_SET : E_WEAK_MAP;
      } else if (kind === T_MODULE_NAMESPACE) {
        open = `${getPrefix(ctor, tag, 'Module')}{`;
        entries = E_NAMESPACE;
      } else if (kind >= T_NUMBER_OBJECT && kind <= T_SYMBOL_OBJECT) {
        if (kind === T_STRING_OBJECT) keys = copyToList(keys);
        head = getBoxedBase(value, st, keys, ctor, tag, kind);
        if (keys.length === 0 && bare) return head;
      } else {
        const label = getCtxStyle(value, ctor, tag);
        if (none) return `${label}{}`;
        open = `${label}{`;
      }
    }

    if (level > st.depth) {
      const label = StringPrototypeSlice(getCtxStyle(value, ctor, tag), 0, -1);
      return st.paint(ctor === null ? label : `[${label}]`, 'special');
    }
    level += 1;

    push(st.stack, value);
    st.innermost = level;
    const savedIndent = st.indent;
    let parts;
    try {
      switch (entries) {
        case E_ARRAY: parts = formatArray(st, value, level); break;
        case E_SET: parts = formatSet(st, value, level, capped ? count : NaN); break;
        case E_MAP: parts = formatMap(st, value, level, capped ? count : NaN); break;
        case E_TYPED_ARRAY: parts = formatTypedArray(st, value, count, level); break;
        case E_ITERATOR: {
          const preview = nPreviewEntries(value);
          if (preview[1]) {
            if (StringPrototypeEndsWith(open, ' Iterator] {')) {
              open = `${StringPrototypeSlice(open, 0, -12)} Entries] {`;
            }
            parts = formatMapIterInner(st, level, preview[0], false);
          } else {
            parts = formatSetIterInner(st, level, preview[0], false);
          }
          break;
        }
        case E_BUFFER: parts = formatArrayBuffer(st, value); break;
        case E_PROMISE: parts = formatPromise(st, value, level); break;
        case E_WEAK_SET: parts = formatSetIterInner(st, level, nPreviewEntries(value)[0], true); break;
        case E_WEAK_MAP: parts = formatMapIterInner(st, level, nPreviewEntries(value)[0], true); break;
        case E_WEAK_HIDDEN:
          parts = newList();
          push(parts, st.paint('<items unknown>', 'special'));
          break;
        case E_NAMESPACE:
          parts = formatNamespaceObject(st, value, level, keys);
          keys = newList();
          break;
        default:
          parts = newList();
          break;
      }
      if (extra !== X_NONE && nodeMajor >= 22) {
        // Node 22+: "[byteLength]: 2", the key styled as a string.
        if (extra === X_BYTE_LENGTH) {
          push(parts, extraProperty(st, 'byteLength', bufferByteLength(value, kind), level, fromTypedArray));
        } else {
          push(parts, extraProperty(st, 'byteLength', dataViewField(st, value, 'byteLength'), level, fromTypedArray));
          push(parts, extraProperty(st, 'byteOffset', dataViewField(st, value, 'byteOffset'), level, fromTypedArray));
          push(parts, extraProperty(st, 'buffer', DataViewPrototypeGetBuffer(value), level, fromTypedArray));
        }
      } else if (extra === X_BYTE_LENGTH) {
        push(parts, formatProperty(st, value, level, 'byteLength', AS_PROPERTIES,
          { value: bufferByteLength(value, kind), enumerable: true }));
      } else if (extra === X_DATA_VIEW) {
        push(parts, formatProperty(st, value, level, 'byteLength', AS_PROPERTIES,
          { value: DataViewPrototypeGetByteLength(value), enumerable: true }));
        push(parts, formatProperty(st, value, level, 'byteOffset', AS_PROPERTIES,
          { value: DataViewPrototypeGetByteOffset(value), enumerable: true }));
        push(parts, formatProperty(st, value, level, 'buffer', AS_PROPERTIES,
          { value: DataViewPrototypeGetBuffer(value), enumerable: true }));
      }
      for (let i = 0; i < keys.length; i++) {
        push(parts, formatProperty(st, value, level, keys[i], mode));
      }
      if (protoLines !== undefined) {
        for (let i = 0; i < protoLines.length; i++) push(parts, protoLines[i]);
      }
    } catch (err) {
      if (!isStackOverflowError(err)) throw err;
      st.stack.length--;
      st.indent = savedIndent;
      const label = StringPrototypeSlice(getCtxStyle(value, ctor, tag), 0, -1);
      return st.paint(`[${label}: Inspection interrupted prematurely. Maximum call stack size exceeded.]`, 'special');
    }

    if (st.refs !== undefined) {
      const id = MapPrototypeGet(st.refs, value);
      if (id !== undefined) {
        const ref = st.paint(`<ref *${id}>`, 'special');
        if (st.compact === true) open = `${ref} ${open}`;
        else head = head === '' ? ref : `${ref} ${head}`;
      }
    }
    st.stack.length--;

    if (st.sorted) sortParts(st, parts, mode === AS_PROPERTIES ? parts.length : keys.length);

    const text = reduceToSingleString(st, parts, head, open, close, mode, level, value);
    // Like Node: once the output at one indentation grows past 2 ** 27
    // characters, stop descending into objects.
    const total = (st.sizes[st.indent] || 0) + text.length;
    st.sizes[st.indent] = total;
    if (total > 2 ** 27) st.depth = -1;
    return text;
  }

