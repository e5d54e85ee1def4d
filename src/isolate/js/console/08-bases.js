  // 08-bases.js: a fragment of the body of the one function the files of parts.txt join into, in its
  // order (README.md): formatRaw's helpers and the bases: boxed primitives, classes, functions.

  // Sort the last `n` parts (only when there are at least two of them for
  // array-likes, whose elements keep their order).
  function sortParts(st, parts, n) {
    const compare = st.sorted === true ? undefined : st.sorted;
    if (n === parts.length) {
      ArrayPrototypeSort(parts, compare);
      return;
    }
    if (n < 2) return;
    const from = parts.length - n;
    const tail = newList();
    for (let i = from; i < parts.length; i++) push(tail, parts[i]);
    ArrayPrototypeSort(tail, compare);
    for (let i = 0; i < tail.length; i++) parts[from + i] = tail[i];
  }

  let stackOverflowMessage;
  // Node's isStackOverflowError (lib/internal/errors.js), as of 20.x-26.x
  function isStackOverflowError(err) {
    if (!isObjectLike(err) || nTypeTag(err) !== T_ERROR || protoOf(err) !== RangeErrorPrototype) {
      return false;
    }
    if (stackOverflowMessage === undefined) {
      try {
        const recurse = function recurse() { recurse(); };
        recurse();
      } catch (e) {
        stackOverflowMessage = lookupData(e, 'message');
      }
    }
    return lookupData(err, 'message') === stackOverflowMessage;
  }

  // Node 22+'s hidden-style entries of array buffers, data views and (with
  // showHidden) typed arrays: "[byteLength]: 2".
  function extraProperty(st, key, v, level, fromTypedArray) {
    st.indent += 2;
    const text = formatValue(st, v, level, fromTypedArray);
    st.indent -= 2;
    return `${st.paint(`[${key}]`, 'string')}: ${text}`;
  }

  // A DataView's byteLength/byteOffset; for a detached one (whose getters
  // throw) Node 22+ shows its buffer's property of that name instead.
  function dataViewField(st, view, key) {
    try {
      return key === 'byteLength' ? DataViewPrototypeGetByteLength(view) : DataViewPrototypeGetByteOffset(view);
    } catch (err) {
      if (nodeMajor < 22) throw err;
      // Node 22 and 24 read the getter after indenting and never undo that
      // indentation when it throws: the rest of the output is 2 deeper.
      if (nodeMajor < 26) st.indent += 2;
      const buffer = DataViewPrototypeGetBuffer(view);
      if (key !== 'byteLength') return lookupData(buffer, key);
      return nTypeTag(buffer) === T_ARRAY_BUFFER ?
        ArrayBufferPrototypeGetByteLength(buffer) : nSharedByteLength(buffer);
    }
  }

  function bufferByteLength(value, kind) {
    return kind === T_ARRAY_BUFFER ?
      ArrayBufferPrototypeGetByteLength(value) :
      nSharedByteLength(value);
  }

  function regExpToString(re) {
    let flags = '';
    for (let i = 0; i < regExpFlagGetters.length; i += 2) {
      if (regExpFlagGetters[i + 1](re)) flags += regExpFlagGetters[i];
    }
    return `/${RegExpPrototypeGetSource(re)}/${flags}`;
  }

  // "[Number: 3]", "[String (MyString): 'x'] [tag]", "[Boolean (null prototype): true]"
  // Node's getBoxedBase (lib/internal/util/inspect.js), as of 20.x-26.x
  function getBoxedBase(value, st, keys, ctor, tag, kind) {
    let type;
    let inner;
    if (kind === T_NUMBER_OBJECT) {
      type = 'Number';
      inner = NumberPrototypeValueOf(value);
    } else if (kind === T_STRING_OBJECT) {
      type = 'String';
      inner = StringPrototypeValueOf(value);
      // The index keys of a String object are its characters: not listed.
      const drop = MathMin(inner.length, keys.length);
      for (let i = drop; i < keys.length; i++) keys[i - drop] = keys[i];
      keys.length -= drop;
    } else if (kind === T_BOOLEAN_OBJECT) {
      type = 'Boolean';
      inner = BooleanPrototypeValueOf(value);
    } else if (kind === T_BIGINT_OBJECT) {
      type = 'BigInt';
      inner = BigIntPrototypeValueOf(value);
    } else {
      type = 'Symbol';
      inner = SymbolPrototypeValueOf(value);
    }
    let text = `[${type}`;
    if (ctor === null) text += ' (null prototype)';
    else if (ctor !== type) text += ` (${ctor})`;
    text += `: ${formatPrimitive(stylizeNoColor, inner, st)}]`;
    if (tag !== '' && tag !== ctor) text += ` [${tag}]`;
    if (keys.length !== 0 || st.paint === stylizeNoColor) return text;
    return st.paint(text, StringPrototypeToLowerCase(type));
  }

  // `${name}` as Node writes a function name (a symbol name throws, as in Node).
  function nameToString(name) {
    return safeToString(name);
  }

  // "[class A]", "[class B extends A]", "[class C [Foo] [tag]]",
  // "[class D extends [null prototype]]"
  // Node's getClassBase (lib/internal/util/inspect.js), as of 20.x-26.x; differs: no getters
  function getClassBase(value, ctor, tag) {
    const ownName = ObjectPrototypeHasOwnProperty(value, 'name') && lookupData(value, 'name');
    let text = `class ${nameToString(ownName || '(anonymous)')}`;
    if (ctor !== 'Function' && ctor !== null) text += ` [${ctor}]`;
    if (tag !== '' && ctor !== tag) text += ` [${tag}]`;
    if (ctor === null) {
      text += ' extends [null prototype]';
    } else {
      const parent = protoOf(value);
      const parentName = parent === null ? undefined : lookupData(parent, 'name');
      if (parentName) text += ` extends ${nameToString(parentName)}`;
    }
    return `[${text}]`;
  }

  // Remove // comments (through their '\n') and /* */ comments, with the
  // same reach as the pattern Node uses (a comment never spans \r, U+2028 or
  // U+2029).
  function stripComments(s) {
    let out = '';
    let from = 0;
    let i = 0;
    const n = s.length;
    while (i < n - 1) {
      if (StringPrototypeCharCodeAt(s, i) !== 47) {
        i++;
        continue;
      }
      const next = StringPrototypeCharCodeAt(s, i + 1);
      let end = -1;
      if (next === 47) {
        for (let j = i + 2; j < n; j++) {
          const c = StringPrototypeCharCodeAt(s, j);
          if (c === 10) {
            end = j + 1;
            break;
          }
          if (c === 13 || c === 0x2028 || c === 0x2029) break;
        }
      } else if (next === 42) {
        for (let j = i + 2; j < n - 1; j++) {
          const c = StringPrototypeCharCodeAt(s, j);
          if (c === 42 && StringPrototypeCharCodeAt(s, j + 1) === 47) {
            end = j + 2;
            break;
          }
          if (c === 13 || c === 0x2028 || c === 0x2029) break;
        }
      }
      if (end === -1) {
        i++;
        continue;
      }
      out += StringPrototypeSlice(s, from, i);
      from = end;
      i = end;
    }
    return out + StringPrototypeSlice(s, from);
  }

  function isSpaceCode(c) {
    return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 ||
      (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f ||
      c === 0x205f || c === 0x3000 || c === 0xfeff;
  }

  // Is this function's source a class? "class" ... "}" whose header (before
  // the first "{") has no "(" -- or, with comments removed, starts with
  // white space and has its first "{" before its first "(".
  function looksLikeClass(source) {
    if (!StringPrototypeStartsWith(source, 'class') || !StringPrototypeEndsWith(source, '}')) return false;
    const body = StringPrototypeSlice(source, 5, -1);
    const brace = StringPrototypeIndexOf(body, '{');
    if (brace === -1) return false;
    if (!StringPrototypeIncludes(StringPrototypeSlice(body, 0, brace), '(')) return true;
    const plain = stripComments(body);
    if (plain.length === 0 || !isSpaceCode(StringPrototypeCharCodeAt(plain, 0))) return false;
    const b = StringPrototypeIndexOf(plain, '{');
    const p = StringPrototypeIndexOf(plain, '(');
    return b !== -1 && (p === -1 || b < p);
  }

  // "[Function: f]", "[AsyncGeneratorFunction (anonymous)] Foo [tag]", ...
  // Node's getFunctionBase (lib/internal/util/inspect.js), as of 20.x-26.x; differs: source read with the captured Function.prototype.toString
  function getFunctionBase(st, value, ctor, tag, kind) {
    if (looksLikeClass(FunctionPrototypeToString(value))) return getClassBase(value, ctor, tag);
    const isAsync = kind === T_ASYNC_FUNCTION || kind === T_ASYNC_GENERATOR_FUNCTION;
    const isGenerator = kind === T_GENERATOR_FUNCTION || kind === T_ASYNC_GENERATOR_FUNCTION;
    const type = `${isAsync ? 'Async' : ''}${isGenerator ? 'Generator' : ''}Function`;
    const name = lookupData(value, 'name');
    let text = `[${type}${ctor === null ? ' (null prototype)' : ''}`;
    if (name === '') {
      text += ' (anonymous)]';
    } else if (nodeMajor >= 22 && typeof name !== 'string') {
      // Node 22+ inspects a name that is not a string (without a depth).
      text += `: ${formatValue(st, name, NaN, false)}]`;
    } else {
      text += `: ${nameToString(name)}]`;
    }
    if (ctor !== type && ctor !== null) text += ` ${ctor}`;
    if (tag !== '' && ctor !== tag) text += ` [${tag}]`;
    return text;
  }

