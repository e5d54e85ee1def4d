  // 10-entries.js: a fragment of the body of the one function the files of parts.txt join into, in
  // its order (README.md): entries of arrays, typed arrays, buffers, sets, maps, iterators,
  // promises, namespaces.

  // ---- Entries ----

  // Node's remainingText (lib/internal/util/inspect.js), as of 20.x-26.x
  function remainingText(n) {
    return `... ${n} more item${n > 1 ? 's' : ''}`;
  }
  function emptyItems(st, n) {
    return st.paint(`<${n} empty item${n > 1 ? 's' : ''}>`, 'undefined');
  }

  // Node's formatArray (lib/internal/util/inspect.js), as of 20.x-26.x
  function formatArray(st, arr, level) {
    const length = arr.length;
    const shown = MathMin(MathMax(0, st.maxArrayLength), length);
    const parts = newList();
    for (let i = 0; i < shown; i++) {
      const d = ObjectGetOwnPropertyDescriptor(arr, i);
      if (d === undefined) return formatSpecialArray(st, arr, level, shown, parts, i);
      push(parts, formatProperty(st, arr, level, i, AS_ELEMENTS, d));
    }
    if (length > shown) push(parts, remainingText(length - shown));
    return parts;
  }

  // An array with holes: walk its own keys from position `k` (the first
  // hole), printing runs of holes as "<n empty items>", until `limit` parts.
  // Node's formatSpecialArray (lib/internal/util/inspect.js), as of 20.x-26.x
  function formatSpecialArray(st, arr, level, limit, parts, k) {
    const keys = ObjectKeys(arr);
    let next = k;  // the index the next part stands for
    for (; k < keys.length && parts.length < limit; k++) {
      const key = keys[k];
      const index = +key;
      if (index > 2 ** 32 - 2) break;
      if (`${next}` !== key) {
        if (!isIndexSpelling(key)) break;
        push(parts, emptyItems(st, index - next));
        next = index;
        if (parts.length === limit) break;
      }
      push(parts, formatProperty(st, arr, level, key, AS_ELEMENTS));
      next++;
    }
    const rest = arr.length - next;
    if (parts.length !== limit) {
      if (rest > 0) push(parts, emptyItems(st, rest));
    } else if (rest > 0) {
      push(parts, remainingText(rest));
    }
    return parts;
  }

  // Node's formatArrayBuffer (lib/internal/util/inspect.js), as of 20.x-26.x
  function formatArrayBuffer(st, buffer) {
    const parts = newList();
    let bytes;
    try {
      bytes = new Uint8ArrayCtor(buffer);
    } catch {
      push(parts, st.paint('(detached)', 'special'));
      return parts;
    }
    const length = TypedArrayPrototypeGetLength(bytes);
    const shown = MathMax(0, MathMin(st.maxArrayLength, length));
    let hex = '';
    for (let i = 0; i < shown; i++) {
      hex += i === 0 ? '' : ' ';
      hex += StringPrototypeToLowerCase(hexByte(bytes[i]));
    }
    const rest = length - st.maxArrayLength;
    if (rest > 0) hex += ` ... ${rest} more byte${rest > 1 ? 's' : ''}`;
    push(parts, `${st.paint('[Uint8Contents]', 'special')}: <${hex}>`);
    return parts;
  }

  function bytesPerElement(kind) {
    switch (kind) {
      case 'Int8Array': case 'Uint8Array': case 'Uint8ClampedArray': return 1;
      case 'Int16Array': case 'Uint16Array': case 'Float16Array': return 2;
      case 'Int32Array': case 'Uint32Array': case 'Float32Array': return 4;
      default: return 8;
    }
  }

  // Node's formatTypedArray (lib/internal/util/inspect.js), as of 20.x-26.x; differs: fields read with captured %TypedArray% getters
  function formatTypedArray(st, arr, length, level) {
    const shown = MathMin(MathMax(0, st.maxArrayLength), length);
    const parts = newList();
    const kind = TypedArrayPrototypeGetSymbolToStringTag(arr);
    const bigint = kind === 'BigInt64Array' || kind === 'BigUint64Array';
    for (let i = 0; i < shown; i++) {
      push(parts, bigint ?
        formatBigInt(st.paint, arr[i], st.numericSeparator) :
        formatNumber(st.paint, arr[i], st.numericSeparator));
    }
    if (length > shown) push(parts, remainingText(length - shown));
    if (st.showHidden && nodeMajor >= 22) {
      push(parts, extraProperty(st, 'BYTES_PER_ELEMENT', bytesPerElement(kind), level, true));
      push(parts, extraProperty(st, 'length', length, level, true));
      push(parts, extraProperty(st, 'byteLength', TypedArrayPrototypeGetByteLength(arr), level, true));
      push(parts, extraProperty(st, 'byteOffset', TypedArrayPrototypeGetByteOffset(arr), level, true));
      push(parts, extraProperty(st, 'buffer', TypedArrayPrototypeGetBuffer(arr), level, true));
    } else if (st.showHidden) {
      st.indent += 2;
      push(parts, `[BYTES_PER_ELEMENT]: ${formatValue(st, bytesPerElement(kind), level, true)}`);
      push(parts, `[length]: ${formatValue(st, length, level, true)}`);
      push(parts, `[byteLength]: ${formatValue(st, TypedArrayPrototypeGetByteLength(arr), level, true)}`);
      push(parts, `[byteOffset]: ${formatValue(st, TypedArrayPrototypeGetByteOffset(arr), level, true)}`);
      push(parts, `[buffer]: ${formatValue(st, TypedArrayPrototypeGetBuffer(arr), level, true)}`);
      st.indent -= 2;
    }
    return parts;
  }

  // A Set's values / a Map's "key => value" entries; `size` NaN means all.
  // Node's formatSet (lib/internal/util/inspect.js), as of 20.x-26.x; differs: iterates with the captured Set iterator (program replacements are not seen)
  function formatSet(st, set, level, size) {
    const shown = MathMin(MathMax(0, st.maxArrayLength), size);
    const parts = newList();
    st.indent += 2;
    const it = SetPrototypeValues(set);
    for (let n = 0; n < shown || shown !== shown; n++) {
      const step = SetIteratorPrototypeNext(it);
      if (step.done) break;
      push(parts, formatValue(st, step.value, level, false));
    }
    if (size - shown > 0) push(parts, remainingText(size - shown));
    st.indent -= 2;
    return parts;
  }

  // Node's formatMap (lib/internal/util/inspect.js), as of 20.x-26.x; differs: iterates with the captured Map iterator (program replacements are not seen)
  function formatMap(st, map, level, size) {
    const shown = MathMin(MathMax(0, st.maxArrayLength), size);
    const parts = newList();
    st.indent += 2;
    const it = MapPrototypeEntries(map);
    for (let n = 0; n < shown || shown !== shown; n++) {
      const step = MapIteratorPrototypeNext(it);
      if (step.done) break;
      const pair = step.value;
      push(parts, `${formatValue(st, pair[0], level, false)} => ${formatValue(st, pair[1], level, false)}`);
    }
    if (size - shown > 0) push(parts, remainingText(size - shown));
    st.indent -= 2;
    return parts;
  }

  // Values previewed from a Set iterator or WeakSet (weak ones sorted).
  // Node's formatSetIterInner (lib/internal/util/inspect.js), as of 20.x-26.x (also for WeakSet entries, as formatWeakSet)
  function formatSetIterInner(st, level, values, weak) {
    const shown = MathMin(MathMax(st.maxArrayLength, 0), values.length);
    const parts = newList();
    st.indent += 2;
    for (let i = 0; i < shown; i++) push(parts, formatValue(st, values[i], level, false));
    st.indent -= 2;
    if (weak && !st.sorted) ArrayPrototypeSort(parts);
    if (values.length > shown) push(parts, remainingText(values.length - shown));
    return parts;
  }

  // Pairs previewed from a Map iterator (as "[ k, v ]") or a WeakMap (as
  // "k => v", sorted).
  // Node's formatMapIterInner (lib/internal/util/inspect.js), as of 20.x-26.x (also for WeakMap entries, as formatWeakMap)
  function formatMapIterInner(st, level, flat, weak) {
    const pairs = flat.length / 2;
    const limit = MathMax(st.maxArrayLength, 0);
    const shown = MathMin(limit, pairs);
    const parts = newList();
    st.indent += 2;
    for (let i = 0; i < shown; i++) {
      const k = formatValue(st, flat[2 * i], level, false);
      const v = formatValue(st, flat[2 * i + 1], level, false);
      if (weak) {
        push(parts, `${k} => ${v}`);
      } else {
        const pair = newList();
        push(pair, k);
        push(pair, v);
        push(parts, reduceToSingleString(st, pair, '', '[', ']', AS_ARRAY_EXTRAS, level, undefined));
      }
    }
    if (weak && !st.sorted) ArrayPrototypeSort(parts);
    st.indent -= 2;
    if (pairs - limit > 0) push(parts, remainingText(pairs - limit));
    return parts;
  }

  // Node's formatPromise (lib/internal/util/inspect.js), as of 20.x-26.x
  function formatPromise(st, promise, level) {
    const parts = newList();
    const details = nPromiseState(promise);
    if (details[0] === 0) {
      push(parts, st.paint('<pending>', 'special'));
      return parts;
    }
    st.indent += 2;
    const result = formatValue(st, details[1], level, false);
    st.indent -= 2;
    push(parts, details[0] === 2 ? `${st.paint('<rejected>', 'special')} ${result}` : result);
    return parts;
  }

  // Node's formatNamespaceObject (lib/internal/util/inspect.js), as of 20.x-26.x
  function formatNamespaceObject(st, ns, level, keys) {
    const parts = newList();
    for (let i = 0; i < keys.length; i++) {
      let d;
      try {
        d = ObjectGetOwnPropertyDescriptor(ns, keys[i]);
      } catch {
        d = undefined;
      }
      if (d !== undefined) {
        push(parts, formatProperty(st, ns, level, keys[i], AS_PROPERTIES, d));
      } else {
        // An uninitialized binding: print the key as usual and the marker.
        const line = formatProperty(st, ns, level, keys[i], AS_PROPERTIES, { value: '', enumerable: true });
        push(parts, StringPrototypeSlice(line, 0, line.length - 2) + st.paint('<uninitialized>', 'special'));
      }
    }
    return parts;
  }

