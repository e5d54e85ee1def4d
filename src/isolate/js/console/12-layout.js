  // 12-layout.js: a fragment of the body of the one function the files of parts.txt join into, in
  // its order (README.md): grouping and line breaking (groupArrayElements, reduceToSingleString).

  // ---- Layout ----

  // Would `parts` fit on one line together with `extra` columns of context?
  // Node's isBelowBreakLength (lib/internal/util/inspect.js), as of 20.x-26.x
  function isBelowBreakLength(st, parts, extra, head) {
    if (nodeMajor >= 24 && st.breakLength === Infinity) {
      // Node 24+: no width limit, so anything without a line break fits.
      if (StringPrototypeIncludes(head, '\n')) return false;
      for (let i = 0; i < parts.length; i++) if (StringPrototypeIncludes(parts[i], '\n')) return false;
      return true;
    }
    let width = parts.length + extra;
    if (width + parts.length > st.breakLength) return false;
    for (let i = 0; i < parts.length; i++) {
      width += st.colors ? removeColors(parts[i]).length : parts[i].length;
      if (width > st.breakLength) return false;
    }
    return head === '' || !StringPrototypeIncludes(head, '\n');
  }

  // Arrange more than six short array entries in aligned columns (numbers
  // right-aligned, anything else left-aligned), as Node does.
  // Node's groupArrayElements (lib/internal/util/inspect.js), as of 20.x-26.x
  function groupArrayElements(st, parts, value) {
    const count = st.maxArrayLength < parts.length ? parts.length - 1 : parts.length;
    const gap = 2; // ", "
    const widths = newList();
    let sum = 0;
    let widest = 0;
    for (let i = 0; i < count; i++) {
      const w = getStringWidth(parts[i], st.colors);
      widths[i] = w;
      sum += w + gap;
      if (w > widest) widest = w;
    }
    const cell = widest + gap;
    if (!(cell * 3 + st.indent < st.breakLength) || !(sum / cell > 5 || widest <= 6)) return parts;

    // Aim for a block about 2.5 times wider than high, biased towards more
    // columns for short entries; never wider than the line, never more than
    // 4 * compact or 15 columns.
    const bias = MathSqrt(cell - sum / parts.length);
    const unit = MathMax(cell - 3 - bias, 1);
    const columns = MathMin(
      MathRound(MathSqrt(2.5 * unit * count) / unit),
      MathFloor((st.breakLength - st.indent) / cell),
      st.compact * 4,
      15);
    if (columns <= 1) return parts;

    const columnWidth = newList();
    for (let c = 0; c < columns; c++) {
      let w = 0;
      for (let j = c; j < parts.length; j += columns) {
        if (widths[j] > w) w = widths[j];
      }
      columnWidth[c] = w + gap;
    }
    let rightAlign = true;
    if (value !== undefined) {
      const typed = nTypeTag(value) === T_TYPED_ARRAY;
      for (let i = 0; i < parts.length; i++) {
        const v = typed ? value[i] : elementValue(value, i);
        if (typeof v !== 'number' && typeof v !== 'bigint') {
          rightAlign = false;
          break;
        }
      }
    }
    const rows = newList();
    for (let start = 0; start < count; start += columns) {
      const end = MathMin(start + columns, count);
      let row = '';
      for (let j = start; j < end; j++) {
        // Pad by display width; escape codes inside a part take no columns.
        const pad = columnWidth[j - start] + parts[j].length - widths[j];
        if (j === end - 1) {
          row += rightAlign ? StringPrototypePadStart(parts[j], pad - gap, ' ') : parts[j];
        } else {
          row += rightAlign ?
            StringPrototypePadStart(`${parts[j]}, `, pad, ' ') :
            StringPrototypePadEnd(`${parts[j]}, `, pad, ' ');
        }
      }
      push(rows, row);
    }
    if (count < parts.length) push(rows, parts[count]);
    return rows;
  }

  // `array[index]` without invoking getters.
  function elementValue(array, index) {
    const d = ObjectGetOwnPropertyDescriptor(array, index);
    if (d !== undefined) return isDataDescriptor(d) ? d.value : undefined;
    const p = protoOf(array);
    return p === null ? undefined : lookupData(p, `${index}`);
  }

  // Join the parts of an object between its braces: on one line when they
  // fit (and the object is among the innermost `compact` levels), else one
  // part per line.
  // Node's reduceToSingleString (lib/internal/util/inspect.js), as of 20.x-26.x
  function reduceToSingleString(st, parts, head, open, close, mode, level, value) {
    const lead = head === '' ? '' : `${head} `;
    if (st.compact !== true) {
      if (typeof st.compact === 'number' && st.compact >= 1) {
        const before = parts.length;
        if (mode === AS_ARRAY_EXTRAS && before > 6) parts = groupArrayElements(st, parts, value);
        if (st.innermost - level < st.compact && parts.length === before &&
            isBelowBreakLength(st, parts, parts.length + st.indent + open.length + head.length + 10, head)) {
          const line = joinWith(parts, ', ');
          if (!StringPrototypeIncludes(line, '\n')) return `${lead}${open} ${line} ${close}`;
        }
      }
      const nl = `\n${StringPrototypeRepeat(' ', st.indent)}`;
      return `${lead}${open}${nl}  ${joinWith(parts, `,${nl}  `)}${nl}${close}`;
    }
    // compact === true: as many parts per line as fit, aligned after `open`.
    const tail = head === '' ? '' : ` ${head}`;
    if (isBelowBreakLength(st, parts, 0, head)) return `${open}${tail} ${joinWith(parts, ', ')} ${close}`;
    const pad = StringPrototypeRepeat(' ', st.indent);
    const first = head === '' && open.length === 1 ? ' ' : `${tail}\n${pad}  `;
    return `${open}${first}${joinWith(parts, `,\n${pad}  `)} ${close}`;
  }

