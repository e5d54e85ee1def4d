  // 11-property.js: a fragment of the body of the one function the files of parts.txt join into, in
  // its order (README.md): one property: its key and value (formatProperty).

  // ---- One property ----

  // The printed form of a property's name: `key`, 'quoted key', [hidden],
  // [Symbol(desc)], ['__proto__'].
  function propertyName(st, key, enumerable) {
    if (nodeMajor >= 24) {
      // Node 24+: symbols without brackets ("Symbol(s): 1"); any hidden key
      // is its usual spelling in brackets ("[Symbol(s)]", "['a-b']").
      let name;
      if (typeof key === 'symbol') {
        name = st.paint(escapeText(SymbolPrototypeToString(key), true), 'symbol');
      } else if (isPlainKey(key)) {
        name = key === '__proto__' ? "['__proto__']" : st.paint(key, 'name');
      } else {
        name = st.paint(strEscape(key), 'string');
      }
      return enumerable === false ? `[${name}]` : name;
    }
    if (typeof key === 'symbol') {
      return `[${st.paint(escapeText(SymbolPrototypeToString(key), true), 'symbol')}]`;
    }
    if (key === '__proto__') return "['__proto__']";
    if (enumerable === false) return `[${escapeText(key, true)}]`;
    if (isPlainKey(key)) return st.paint(key, 'name');
    return st.paint(strEscape(key), 'string');
  }

  // The value of an accessor property: [Getter], [Setter], [Getter/Setter],
  // or with the `getters` option the getter's result.
  function accessorText(st, get, set, receiver, level) {
    if (get === undefined) {
      return set === undefined ? st.paint('undefined', 'undefined') : st.paint('[Setter]', 'special');
    }
    const label = set === undefined ? 'Getter' : 'Getter/Setter';
    const wanted = st.getters && (st.getters === true ||
      (st.getters === 'get' && set === undefined) || (st.getters === 'set' && set !== undefined));
    if (!wanted) return st.paint(`[${label}]`, 'special');
    const paint = st.paint;
    if (nodeMajor >= 24) return accessorText24(st, get, receiver, level, label);
    try {
      const got = ReflectApply(get, receiver, []);
      st.indent += 2;
      let text;
      if (got === null) {
        text = `${paint(`[${label}:`, 'special')} ${paint('null', 'null')}${paint(']', 'special')}`;
      } else if (typeof got === 'object') {
        text = `${paint(`[${label}]`, 'special')} ${formatValue(st, got, level, false)}`;
      } else {
        text = `${paint(`[${label}:`, 'special')} ${formatPrimitive(paint, got, st)}${paint(']', 'special')}`;
      }
      st.indent -= 2;
      return text;
    } catch (err) {
      // Node 20/22 read `err.message`, which throws for null and undefined.
      if (err == null) void err.message;
      let message;
      if (isObjectLike(err)) {
        const e = unwrapProxy(err);
        message = e === null ? undefined : lookupData(e, 'message');
      }
      return `${paint(`[${label}:`, 'special')} <Inspection threw (${
        isObjectLike(message) ? '' : message})>${paint(']', 'special')}`;
    }
  }

  // Node 24+: functions returned by a getter are inspected like objects, and
  // a throwing getter shows what it threw, inspected.
  function accessorText24(st, get, receiver, level, label) {
    const paint = st.paint;
    st.indent += 2;
    let text;
    try {
      const got = ReflectApply(get, receiver, []);
      if (got === null) {
        text = `${paint(`[${label}:`, 'special')} ${paint('null', 'null')}${paint(']', 'special')}`;
      } else if (typeof got === 'object' || typeof got === 'function') {
        text = `${paint(`[${label}]`, 'special')} ${formatValue(st, got, level, false)}`;
      } else {
        text = `${paint(`[${label}:`, 'special')} ${formatPrimitive(paint, got, st)}${paint(']', 'special')}`;
      }
    } catch (err) {
      text = `${paint(`[${label}:`, 'special')} <Inspection threw (${formatValue(st, err, level, false)})>${
        paint(']', 'special')}`;
    }
    st.indent -= 2;
    return text;
  }

  // "key: value" for a property of `obj` (just the value for elements).
  // `desc` defaults to the own descriptor (or the getter-free inherited value).
  // Node's formatProperty (lib/internal/util/inspect.js), as of 20.x-26.x; a getter runs only with the `getters` option, as in Node
  function formatProperty(st, obj, level, key, mode, desc, receiver) {
    if (desc === undefined) {
      desc = ObjectGetOwnPropertyDescriptor(obj, key);
      if (desc === undefined) desc = { value: lookupData(obj, key), enumerable: true };
    }
    if (nodeMajor < 22 && NativeErrorStackGetter !== undefined && key === 'stack' && !isDataDescriptor(desc) &&
        desc.get === NativeErrorStackGetter) {
      desc = { value: ReflectApply(NativeErrorStackGetter, obj, []), enumerable: desc.enumerable };
    }
    let text;
    let separator = ' ';
    if (!isDataDescriptor(desc)) {
      text = accessorText(st, desc.get, desc.set, receiver === undefined ? obj : receiver, level);
    } else if (desc.value === undefined) {
      text = st.paint('undefined', 'undefined');
    } else {
      // compact=true objects indent their values by 3 and move a value that
      // is wider than breakLength to its own line.
      const step = st.compact === true && mode === AS_PROPERTIES ? 3 : 2;
      st.indent += step;
      text = formatValue(st, desc.value, level, false);
      if (step === 3 && st.breakLength < getStringWidth(text, st.colors)) {
        separator = `\n${StringPrototypeRepeat(' ', st.indent)}`;
      }
      st.indent -= step;
    }
    if (mode === AS_ELEMENTS) return text;
    return `${propertyName(st, key, desc.enumerable)}:${separator}${text}`;
  }

