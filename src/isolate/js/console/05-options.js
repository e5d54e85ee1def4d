  // 05-options.js: a fragment of the body of the one function the files of parts.txt join into, in
  // its order (README.md): inspect options, per-call state, styles and regexp highlighting.

  // =========================================================================
  // 4. Options and per-call state
  // =========================================================================

  // Node's stylizeNoColor (lib/internal/util/inspect.js), as of 20.x-26.x
  function stylizeNoColor(text) {
    return text;
  }

  // ANSI SGR [on, off] codes of Node's default inspect styles.
  function styleOn(style) {
    switch (style) {
      case 'special': return 36;
      case 'number': case 'bigint': case 'boolean': return 33;
      case 'undefined': return 90;
      case 'null': return 1;
      case 'string': case 'symbol': return 32;
      case 'date': return 35;
      case 'regexp': return 31;
      case 'module': return 4;
      default: return 0;
    }
  }
  // Node's stylizeWithColor (lib/internal/util/inspect.js), as of 20.x-26.x; differs: fixed styles and colours: a program cannot change inspect.styles/colors
  function stylizeWithColor(text, style) {
    if (style === 'regexp' && nodeMajor >= 26) return highlightRegExp(text);
    const on = styleOn(style);
    if (on === 0) return text;
    const off = on === 1 ? 22 : on === 4 ? 24 : 39;
    return `\u001b[${on}m${text}\u001b[${off}m`;
  }

  // Node 26+ colours a regexp by its syntax: each token gets the colour of
  // its nesting depth from a five-colour palette (green, red, yellow, cyan,
  // magenta), with quantifiers, alternation and anchors three steps deeper,
  // `.` two. A tolerant single pass, reproducing Node's heuristics exactly
  // (the text passed in may start with a class label, as in Node).
  const REGEXP_PALETTE = newList();
  push(REGEXP_PALETTE, '\u001b[32m');  // green
  push(REGEXP_PALETTE, '\u001b[31m');  // red
  push(REGEXP_PALETTE, '\u001b[33m');  // yellow
  push(REGEXP_PALETTE, '\u001b[36m');  // cyan
  push(REGEXP_PALETTE, '\u001b[35m');  // magenta
  // Node's highlightRegExp (lib/internal/util/inspect.js), as of 26.x
  function highlightRegExp(re) {
    const n = re.length;
    let out = '';
    let i = 0;
    let depth = 0;
    let inClass = false;
    const at = (k) => (k >= 0 && k < n ? re[k] : '');
    const isDigit = (c) => c !== '' && c >= '0' && c <= '9';
    const paint = (text) => {
      // (A negative depth, which unbalanced input can reach, takes the first.)
      out += `${REGEXP_PALETTE[depth % 5] || REGEXP_PALETTE[0]}${text}\u001b[39m`;
    };
    // Paint one step (or `by` steps) deeper, then move on `advance` characters.
    const paintDeeper = (text, by, advance) => {
      depth += by;
      paint(text);
      depth -= by;
      i += advance;
    };
    // `open` was read, up to the character before re[i]; a closed group
    // "open body close" is painted as a unit, an unclosed one as `open` only.
    const paintGroup = (open, close, shallower) => {
      i++;
      let body = '';
      while (i < n && re[i] !== close) body += re[i++];
      if (i < n) {
        depth -= shallower;
        paint(open);
        paintDeeper(body, 1, 1);
        paint(close);
        depth += shallower;
      } else {
        paintDeeper(open, 1, -body.length);
      }
    };

    paint('/');
    depth++;
    i = 1;
    while (i < n) {
      const c = re[i];
      if (inClass) {
        if (c === '\\') {
          let seq = '\\';
          i++;
          if (i < n) {
            seq += re[i++];
            const kind = seq[1];
            if ((kind === 'u' || kind === 'p' || kind === 'P') && at(i) === '{') {
              paintGroup(`${seq}{`, '}', 0);
              continue;
            }
            if (kind === 'x') {
              seq += StringPrototypeSlice(re, i, i + 2);
              i += 2;
            }
          }
          paint(seq);
        } else if (c === ']') {
          depth--;
          paint(']');
          i++;
          inClass = false;
        } else if (c === '-' && re[i - 1] !== '[' && i + 1 < n && re[i + 1] !== ']') {
          paintDeeper('-', 1, 1);
        } else {
          paint(c);
          i++;
        }
      } else if (c === '[') {
        paint('[');
        depth++;
        i++;
        inClass = true;
      } else if (c === '(') {
        paint('(');
        depth++;
        i++;
        if (at(i) === '?') {
          i++;
          const a = at(i);
          const b = at(i + 1);
          if (a === ':' || a === '=' || a === '!') {
            paintDeeper(`?${a}`, -1, 1);
          } else if (a === '<' && (b === '=' || b === '!')) {
            paintDeeper(`?<${b}`, -1, 2);
          } else if (a === '<') {
            i++;
            const from = i;
            while (i < n && re[i] !== '>') i++;
            const name = StringPrototypeSlice(re, from, i);
            if (i < n) {
              depth--;
              paint('?<');
              paintDeeper(name, 1, 0);
              paint('>');
              depth++;
              i++;
            } else {
              paintDeeper('?<', -1, 0);
              paint(name);
            }
          } else {
            paint('?');
          }
        }
      } else if (c === ')') {
        depth--;
        paint(')');
        i++;
      } else if (c === '\\') {
        let seq = '\\';
        i++;
        if (i < n) {
          seq += re[i++];
          const kind = seq[1];
          if (i < n) {
            if (kind === 'u' && re[i] === '{') {
              paintGroup(`${seq}{`, '}', 0);
              continue;
            } else if (kind === 'x') {
              seq += StringPrototypeSlice(re, i, i + 2);
              i += 2;
            } else if (isDigit(kind)) {
              while (i < n && isDigit(re[i])) seq += re[i++];
            } else if (kind === 'k' && re[i] === '<') {
              paintGroup(`${seq}<`, '>', 1);
              continue;
            } else if ((kind === 'p' || kind === 'P') && re[i] === '{') {
              paintGroup(`${seq}{`, '}', 0);
              continue;
            }
          }
        }
        paintDeeper(seq, 1, 0);
      } else if (c === '|' || c === '+' || c === '*' || c === '?' || c === ',' || c === '^' || c === '$') {
        paintDeeper(c, 3, 1);
      } else if (c === '{') {
        i++;
        let low = '';
        while (i < n && isDigit(re[i])) low += re[i++];
        if (low !== '') {
          paint('{');
          depth++;
          paintDeeper(low, 1, 0);
        }
        if (i < n) {
          if (re[i] === ',') {
            if (low === '') {
              paint('{');
              depth++;
            }
            paint(',');
            i++;
          } else if (low === '') {
            paintDeeper('{', 1, 0);
            continue;
          }
        }
        let high = '';
        while (i < n && isDigit(re[i])) high += re[i++];
        if (high !== '') paintDeeper(high, 1, 0);
        if (at(i) === '}') {
          depth--;
          paint('}');
          i++;
        }
        if (at(i) === '?') paintDeeper('?', 3, 1);
      } else if (c === '.') {
        paintDeeper(c, 2, 1);
      } else if (c === '/') {
        break;
      } else {
        paintDeeper(c, 1, 1);
      }
    }
    paintDeeper('/', -1, 1);
    if (i < n) paint(StringPrototypeSlice(re, i));
    return out;
  }

  // An options record carries every inspect option, always all present.
  function makeOptions(depth, showHidden, showProxy, colors, maxArrayLength,
    maxStringLength, breakLength, compact, sorted, getters, numericSeparator) {
    return {
      depth, showHidden, showProxy, colors, maxArrayLength, maxStringLength,
      breakLength, compact, sorted, getters, numericSeparator,
    };
  }
  function copyOptions(o) {
    return makeOptions(o.depth, o.showHidden, o.showProxy, o.colors, o.maxArrayLength,
      o.maxStringLength, o.breakLength, o.compact, o.sorted, o.getters, o.numericSeparator);
  }
  // util.inspect's defaults, and the console's inspectOptions.
  const DEFAULT_OPTIONS = makeOptions(2, false, false, false, 100, 10000, 80, 3, false, false, false);
  const LOG_OPTIONS = makeOptions(4, false, false, false, 100, 10000, 80, 3, false, false, false);

  // Copy the recognised options from a program-provided object: own
  // enumerable data properties only (its getters are not invoked).
  function applyUserOptions(target, opts) {
    // Primitives spread no option keys (`{ ...'str' }` only has index keys).
    if (!isObjectLike(opts)) return target;
    opts = unwrapProxy(opts);
    if (opts === null) return target;
    const keys = ObjectKeys(opts);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const d = ObjectGetOwnPropertyDescriptor(opts, key);
      if (d === undefined || !isDataDescriptor(d)) continue;
      const v = d.value;
      switch (key) {
        case 'depth': target.depth = v; break;
        case 'showHidden': target.showHidden = v; break;
        case 'showProxy': target.showProxy = v; break;
        case 'colors': target.colors = v; break;
        case 'maxArrayLength': target.maxArrayLength = v; break;
        case 'maxStringLength': target.maxStringLength = v; break;
        case 'breakLength': target.breakLength = v; break;
        case 'compact': target.compact = v; break;
        case 'sorted': target.sorted = v; break;
        case 'getters': target.getters = v; break;
        case 'numericSeparator': target.numericSeparator = v; break;
        default: break; // customInspect, stylize and unknown keys are ignored
      }
    }
    return target;
  }

  // The state of one top-level inspection. `null` limits mean "no limit".
  function newState(o) {
    return {
      sizes: newList(),      // output length so far, per indentation
      indent: 0,             // current indentation (columns)
      stack: newList(),      // objects being printed (cycle detection)
      innermost: 0,          // level of the most recently opened object
      refs: undefined,       // Map object -> reference number
      paint: o.colors ? stylizeWithColor : stylizeNoColor,
      showHidden: o.showHidden,
      depth: o.depth === null ? Infinity : o.depth,
      colors: o.colors,
      showProxy: o.showProxy,
      maxArrayLength: o.maxArrayLength === null ? Infinity : o.maxArrayLength,
      maxStringLength: o.maxStringLength === null ? Infinity : o.maxStringLength,
      breakLength: o.breakLength,
      compact: o.compact,
      sorted: o.sorted,
      getters: o.getters,
      numericSeparator: o.numericSeparator,
    };
  }

  function inspectWithOptions(value, o) {
    return formatValue(newState(o), value, 0, false);
  }

