  // 09-errors.js: a fragment of the body of the one function the files of parts.txt join into, in
  // its order (README.md): errors and their stacks (formatError).

  // ---- Errors ----

  // Error.prototype.toString, reading name and message without getters.
  function errorToString(err) {
    const name = lookupData(err, 'name');
    const message = lookupData(err, 'message');
    // (ToString throws for a symbol, as in Error.prototype.toString.)
    const n = name === undefined ? 'Error' : safeToString(name);
    const m = message === undefined ? '' : safeToString(message);
    if (n === '') return m;
    if (m === '') return n;
    return `${n}: ${m}`;
  }

  // Node's getStackString (lib/internal/util/inspect.js), as of 20.x-26.x
  function getStackString(st, err) {
    if (nodeMajor < 22) {
      const stack = getWithAccessors(err, 'stack');
      return stack ? toStr(stack) : errorToString(err);
    }
    // Node 22+: a throwing `stack` accessor counts as no stack; a stack that
    // is not a string is inspected below the error's summary line (without
    // a depth, as Node does it).
    let stack;
    try {
      stack = getWithAccessors(err, 'stack');
    } catch {
      stack = undefined;
    }
    if (!stack) return errorToString(err);
    if (typeof stack === 'string') return stack;
    push(st.stack, err);
    st.indent += 4;
    const text = formatValue(st, stack, NaN, false);
    st.indent -= 4;
    st.stack.length--;
    return `${errorToString(err)}\n    ${text}`;
  }

  // The first run of more than three consecutive lines of `a` that also
  // appears consecutively in `b`: { len, offset } (offset in `a`).
  // Node's identicalSequenceRange (lib/internal/util/inspect.js), as of 20.x-26.x
  function identicalSequenceRange(a, b) {
    for (let i = 0; i < a.length - 3; i++) {
      const at = listIndexOf(b, a[i]);
      if (at === -1) continue;
      const room = b.length - at;
      if (room <= 3) continue;
      const limit = MathMin(a.length - i, room);
      let len = 1;
      while (len < limit && a[i + len] === b[at + len]) len++;
      if (len > 3) return { len, offset: i };
    }
    return { len: 0, offset: 0 };
  }

  // The frame lines of a stack; frames shared with the cause's stack are
  // folded into "... N lines matching cause stack trace ...".
  // Node's getStackFrames (lib/internal/util/inspect.js), as of 20.x-26.x; differs: no node_modules/cwd marking (there is no cwd)
  function getStackFrames(st, err, frames) {
    const lines = splitString(frames, '\n');
    const out = foldCauseFrames(st, err, lines);
    return nodeMajor >= 22 && out.length > 10 ? collapseRepeatedFrames(st, out) : out;
  }

  function foldCauseFrames(st, err, lines) {
    let cause = lookupData(err, 'cause');
    if (cause == null || !isErrorValue(cause)) return lines;
    cause = unwrapProxy(cause);
    const causeStack = getStackString(st, cause);
    const at = StringPrototypeIndexOf(causeStack, '\n    at');
    if (at === -1) return lines;
    const shared = identicalSequenceRange(lines, splitString(StringPrototypeSlice(causeStack, at + 1), '\n'));
    if (shared.len === 0) return lines;
    const folded = shared.len - 2;
    const out = newList();
    for (let i = 0; i <= shared.offset; i++) push(out, lines[i]);
    push(out, st.paint(`    ... ${folded} lines matching cause stack trace ...`, 'undefined'));
    for (let i = shared.offset + 1 + folded; i < lines.length; i++) push(out, lines[i]);
    return out;
  }

  // Node 22+: runs of repeated frames in a long stack (recursion) are
  // replaced by "... collapsed N duplicate lines matching above ...".
  function collapseRepeatedFrames(st, frames) {
    const ranges = getDuplicateErrorFrameRanges(frames);
    for (let r = ranges.length - 3; r >= 0; r -= 3) {
      const offset = ranges[r];
      const length = ranges[r + 1];
      const times = ranges[r + 2];
      const what = times > 1 ? `${length} lines ${times} times...` : 'lines ...';
      const marker = st.paint(`    ... collapsed ${length * times} duplicate lines matching above ${what}`, 'undefined');
      const out = newList();
      for (let i = 0; i < offset; i++) push(out, frames[i]);
      push(out, marker);
      for (let i = offset + length * times; i < frames.length; i++) push(out, frames[i]);
      frames = out;
    }
    return frames;
  }

  // [offset, length, times, ...]: at `offset` a block of `length` frames
  // repeats the block before it `times` times (Node's search: candidate
  // periods from the gcd of the distances between equal lines, keeping the
  // one hiding the most frames).
  // Node's getDuplicateErrorFrameRanges (lib/internal/util/inspect.js), as of 22.x-26.x
  function getDuplicateErrorFrameRanges(frames) {
    const result = newList();
    const positions = new MapCtor();
    for (let i = 0; i < frames.length; i++) {
      const list = MapPrototypeGet(positions, frames[i]);
      if (list === undefined) {
        const fresh = newList();
        push(fresh, i);
        MapPrototypeSet(positions, frames[i], fresh);
      } else {
        push(list, i);
      }
    }
    const minimum = 3;
    if (frames.length - MapPrototypeGetSize(positions) <= minimum) return result;
    for (let i = 0; i < frames.length - minimum; i++) {
      const at = MapPrototypeGet(positions, frames[i]);
      if (at.length === 1 || at[at.length - 1] === i) continue;
      const current = listIndexOf(at, i) + 1;
      if (current === at.length) continue;
      let range = at[at.length - 1] - i;
      if (range < minimum) continue;
      let steps;  // other candidate periods, in the order found
      if (current + 1 < at.length) {
        let gcd = 0;
        for (let j = current; j < at.length; j++) {
          let distance = at[j] - i;
          while (distance !== 0) {
            const remainder = gcd % distance;
            if (gcd !== 0) {
              if (steps === undefined) steps = newList();
              if (!listIncludes(steps, gcd)) push(steps, gcd);
            }
            gcd = distance;
            distance = remainder;
          }
          if (gcd === 1) break;
        }
        range = gcd;
        if (steps !== undefined) {
          const k = listIndexOf(steps, range);
          if (k !== -1) listRemoveAt(steps, k);
        }
      }
      let bestRange = range;
      let bestTimes = 0;
      let times = 0;
      for (let next = i + range; ; next += range) {
        let equal = 0;
        for (let j = 0; j < range; j++) {
          if (frames[i + j] !== frames[next + j]) break;
          equal++;
        }
        if (equal !== range) {
          if (steps === undefined || steps.length === 0) break;
          if (times !== 0 && bestRange * bestTimes < range * times) {
            bestRange = range;
            bestTimes = times;
          }
          range = steps[steps.length - 1];
          steps.length--;
          next = i;
          times = 0;
          continue;
        }
        times++;
      }
      if (bestTimes !== 0 && bestRange * bestTimes >= range * times) {
        range = bestRange;
        times = bestTimes;
      }
      if (times * range >= 3) {
        push(result, i + range);
        push(result, range);
        push(result, times);
        i += range * (times + 1) - 1;
      }
    }
    return result;
  }

  function isUpperCode(c) {
    return c >= 65 && c <= 90;
  }
  // Characters of an error name at the start of a stack: [a-z_ A-Z0-9[\]()-]
  function isStackNameCode(c) {
    return isAlnumCode(c) || c === 95 || c === 32 || c === 91 || c === 93 ||
      c === 40 || c === 41 || c === 45;
  }
  // The error name a stack starts with, for errors without a prototype:
  // "Name: ...", "Name\n    at ...", or a stack that is just "...Error".
  function leadingErrorName(stack) {
    if (stack.length > 1 && isUpperCode(StringPrototypeCharCodeAt(stack, 0))) {
      let i = 1;
      while (i < stack.length && isStackNameCode(StringPrototypeCharCodeAt(stack, i))) i++;
      if (i > 1 && (codeAt(stack, i) === 58 || StringPrototypeStartsWith(stack, '\n    at', i))) {
        return StringPrototypeSlice(stack, 0, i);
      }
    }
    if (StringPrototypeEndsWith(stack, 'Error')) {
      for (let i = 0; i < stack.length; i++) {
        const c = StringPrototypeCharCodeAt(stack, i);
        if (!isAlnumCode(c) && c !== 95 && c !== 45) return '';
      }
      return stack;
    }
    return '';
  }

  // Make the first line name the constructor when it differs from the
  // error's name: "B [ToolCallError]: nope", "[Error: null prototype]: x".
  // Node's improveStack (lib/internal/util/inspect.js), as of 20.x-26.x
  function improveStack(stack, ctor, name, tag) {
    let nameLength = name.length;
    if (ctor !== null) {
      if (!StringPrototypeEndsWith(name, 'Error') || !StringPrototypeStartsWith(stack, name)) return stack;
      const after = codeAt(stack, nameLength);
      if (after !== -1 && after !== 58 && after !== 10) return stack;
    }
    let fallback = 'Error';
    if (ctor === null) {
      const found = leadingErrorName(stack);
      nameLength = found.length;
      fallback = found || 'Error';
    }
    const label = StringPrototypeSlice(getPrefix(ctor, tag, fallback), 0, -1);
    if (name === label) return stack;
    if (!StringPrototypeIncludes(label, name)) {
      return `${label} [${name}]${StringPrototypeSlice(stack, nameLength)}`;
    }
    return nameLength === 0 ? `${label}: ${stack}` : label + StringPrototypeSlice(stack, nameLength);
  }

  // Own enumerable name/message/stack keys are not listed when the stack
  // already shows their value.
  // Node's removeDuplicateErrorKeys (lib/internal/util/inspect.js), as of 20.x-26.x; differs: no getters
  function removeDuplicateErrorKeys(st, keys, err, stack) {
    if (st.showHidden || keys.length === 0) return;
    if (nodeMajor >= 22) {
      // Node 22+: `stack` is never listed; name and message when they are
      // not strings or the stack shows them.
      let at = listIndexOf(keys, 'stack');
      if (at !== -1) listRemoveAt(keys, at);
      const candidates = ['message', 'name'];
      for (let k = 0; k < 2; k++) {
        at = listIndexOf(keys, candidates[k]);
        if (at === -1) continue;
        const v = lookupData(err, candidates[k]);
        if (typeof v !== 'string' || StringPrototypeIncludes(stack, v)) listRemoveAt(keys, at);
      }
      return;
    }
    const candidates = ['name', 'message', 'stack'];
    for (let k = 0; k < 3; k++) {
      const at = listIndexOf(keys, candidates[k]);
      if (at !== -1 && StringPrototypeIncludes(stack, safeToString(lookupData(err, candidates[k])))) {
        listRemoveAt(keys, at);
      }
    }
  }

  // The head of an error: its stack (or "[Name: message]" when it has no
  // frames), relabelled, re-indented; `keys` gains `cause` and `errors`.
  // Node's formatError (lib/internal/util/inspect.js), as of 20.x-26.x; differs: name, message, cause and errors read without getters
  function formatError(err, ctor, tag, st, keys) {
    const nameValue = lookupData(err, 'name');
    let name = nameValue != null ? toStr(nameValue) : 'Error';
    let stack;
    if (nodeMajor >= 22) {
      // Node 22+ falls back to Object.prototype.toString when the summary
      // line cannot be built (a symbol name or message).
      try {
        stack = getStackString(st, err);
      } catch {
        return objectPrototypeToString(err);
      }
    } else {
      stack = getStackString(st, err);
    }
    removeDuplicateErrorKeys(st, keys, err, stack);
    const newer = nodeMajor >= 22;  // Node 22+ lists own `cause` / `errors` only
    if ((newer ? ObjectPrototypeHasOwnProperty(err, 'cause') : hasDataOrOwn(err, 'cause')) &&
        !listIncludes(keys, 'cause')) {
      push(keys, 'cause');
    }
    const errors = lookupData(err, 'errors');
    if (isObjectLike(errors) && isArrayValue(errors) && (!newer || ObjectPrototypeHasOwnProperty(err, 'errors')) &&
        !listIncludes(keys, 'errors')) {
      push(keys, 'errors');
    }

    if (nodeMajor >= 26) {
      // Node 26+ lists a SuppressedError's own `error` and `suppressed`.
      if (ObjectPrototypeHasOwnProperty(err, 'error') && !listIncludes(keys, 'error')) push(keys, 'error');
      if (ObjectPrototypeHasOwnProperty(err, 'suppressed') && !listIncludes(keys, 'suppressed')) push(keys, 'suppressed');
    }

    if (newer && nameValue != null && typeof nameValue !== 'string') {
      // Node 22+ marks a non-string name where the stack shows it, and then
      // only relabels null-prototype errors.
      const label = StringPrototypeSlice(getPrefix(ctor, tag, 'Error'), 0, -1);
      const at = StringPrototypeIndexOf(stack, name);
      if (at !== -1) {
        stack = `${StringPrototypeSlice(stack, 0, at)}${name} [${label}]${StringPrototypeSlice(stack, at + name.length)}`;
      }
      if (ctor !== null) name = undefined;
    }
    if (name !== undefined) stack = improveStack(stack, ctor, name, tag);

    // Frames start at the first "\n    at" after the message.
    const message = lookupData(err, 'message');
    let searchFrom = -1;
    if (typeof message === 'string' && message !== '') {
      const at = StringPrototypeIndexOf(stack, message);
      if (at > 0) searchFrom = at + message.length;
    }
    const framesAt = StringPrototypeIndexOf(stack, '\n    at', searchFrom);
    if (framesAt === -1) {
      stack = `[${stack}]`;
    } else {
      const lines = getStackFrames(st, err, StringPrototypeSlice(stack, framesAt + 1));
      stack = `${StringPrototypeSlice(stack, 0, framesAt)}\n${joinWith(lines, '\n')}`;
    }
    if (st.indent !== 0) stack = replaceNewlines(stack, `\n${StringPrototypeRepeat(' ', st.indent)}`);
    return stack;
  }

  function isArrayValue(v) {
    const t = nTypeTag(v);
    if (t === T_ARRAY) return true;
    if (t !== T_PROXY) return false;
    const target = unwrapProxy(v);
    return target !== null && nTypeTag(target) === T_ARRAY;
  }

