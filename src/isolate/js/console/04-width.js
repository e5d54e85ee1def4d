  // 04-width.js: a fragment of the body of the one function the files of parts.txt join into, in its
  // order (README.md): display width (getStringWidth) and its width table.

  // ---- Display width ----
  // Node measures display width with ICU (East Asian Width, emoji
  // presentation, zero-width categories). The isolate has no such API, so
  // WIDTH_TABLE is a snapshot of the per-code-point widths Node 20's ICU
  // reports (scripts/gen-width-table.cjs): comma-separated ranges
  // "<gap><w><len>" (base 36; gap from the previous range's end, '.' width 0,
  // ':' width 2). Unlisted code points are 1 column wide.
  const WIDTH_TABLE =
    '0.v,2n.w,gw.33,7n.6,7b.18,1.0,1.1,1.1,1.0,1k.5,a.a,1.0,1a.k,g.0,2t.7,1.5,2.1,1.3,x.0,1.0,u.q,' +
    '2j.a,1m.8,9.0,o.3,1.8,1.2,1.4,17.2,1g.1,5.8,16.1k,1j.0,1.0,4.7,4.0,3.6,a.1,t.0,1m.0,4.3,8.0,k.1,' +
    'q.0,2.1,1l.0,4.1,4.1,2.2,3.0,u.1,3.0,b.1,1l.0,4.4,1.1,4.0,k.1,m.5,1.0,1m.0,2.0,1.3,8.0,7.1,b.1,' +
    'u.0,1p.0,c.0,1e.0,3.0,1j.0,1.2,5.2,1.3,7.1,b.1,t.0,1m.0,2.0,6.0,5.1,k.1,s.1,1l.1,4.3,8.0,k.1,t.0,' +
    '20.0,7.2,1.0,2i.0,2.6,c.7,2q.0,2.8,b.6,21.1,r.0,1.0,1.0,1j.d,1.4,1.1,5.a,1.z,9.0,2u.3,1.5,1.1,' +
    '2.1,p.1,4.2,g.3,d.0,2.1,6.0,f.0,2q:2n,e5.2,qa.2,t.1,u.1,u.1,1s.1,1.6,8.0,2.a,9.0,19.4,39.1,y.0,' +
    '3a.2,4.1,9.0,6.2,63.1,2.0,1m.0,1.6,1.0,1.0,2.7,6.9,2.0,1c.19,2.b,k.3,1c.0,1.4,1.0,5.0,14.8,c.1,' +
    'w.3,2.1,1.2,1k.0,1.1,3.0,1.2,1m.7,2.1,48.2,1.c,1.6,4.0,6.0,3.1,5i.1r,ej.4,q.4,1d.4,1.9,2o.w,fd:1,' +
    'd:1,5a:3,3:0,2:0,eh:1,l:1,q:7,g:b,17:0,a:5,3:0,d:0,8:1,h:1,5:1,8:0,5:0,l:0,7:1,1:0,4:0,2:0,7:0,' +
    '4:1,s:0,z:0,1:0,4:2,1:0,1p:2,o:0,e:0,nv:1,1f:0,4:0,bd.2,3x.0,2o.v,3k:p,1:2g,c:5x,q:26,2:2d,2:2u,' +
    '5:16,1:2l,1:2d,9:1b,1:13,8:mkc,3:1i,bs.3,1.9,w.1,28.1,7k.0,3.0,4.0,p.1,5.0,47.1,q.h,d.0,12.7,p.a,' +
    'e:s,3.2,1c.0,2.3,2.1,13.0,1v.5,2.1,2.1,c.0,8.0,1b.0,1f.0,1.2,2.1,5.1,1.0,16.1,8.0,6m.0,2.0,4.0,' +
    'i:8mb,6l8:e7,u.0,kh.f,0:9,6.f,0:y,1:i,1:3,43.0,1:2n,3j:6,i.2,e9.0,6a.0,45.4,1ae.2,1.1,5.3,14.2,' +
    '4.0,4l.1,fx.3,1t.4,8t.1,25.5,1y.a,1d.3,3f.0,1i.e,15.0,2.1,a.2,1d.3,2.1,2.0,4.0,a.0,1e.2,10.4,1.7,' +
    '1q.0,c.1,1g.8,a.3,2.0,2n.2,2.0,1.1,6.0,2.0,4d.0,3.7,l.1,1l.1,3.0,11.6,3.4,1y.5,d.0,1.0,1.0,e.1,' +
    '2d.7,2.2,1.0,n.0,2c.5,1.0,4.1,1.1,6m.3,6.1,1.1,r.1,2d.7,2.0,1.1,2y.0,1.0,2.5,1.0,2t.0,1.0,2.3,' +
    '1.4,77.8,1.1,74.1,1.0,4.0,40.3,2.1,4.0,w.9,14.5,2.3,8.0,9.5,2.2,1a.c,1.1,5i.0,1.2,1.0,5l.6,1.5,' +
    '1.0,2a.l,2.6,1.1,1.1,3e.5,3.0,1.1,1.6,1.0,20.1,3.0,1.0,9n.1,b.1,1g.4,5.0,1.0,n.0,445.g,6.e,8ug.b,' +
    '3.2,1xc.4,1n.6,t4.0,1r.3,25:4,b:6,9:5p1,15:v,2p:36,6pp:3,1:6,1:1,1:82,f:0,t:2,2:0,e:3,8:az,1wh.1,' +
    '1.3,3mk.19,2.m,f4.2,9.f,2.6,u.3,44.2,57:2e,9:m,1ah.1i,4.1d,8.0,e.0,m.4,1.e,11s.6,1.g,2.6,1.1,1.4,' +
    '2s.0,4g.6,af.0,1p.3,e4.3,72.1,6r.0,2.0,7.1,5.0,d6.6,31.6,1bt:0,5m:0,5a:0,2:9,23:s,d:17,4:8,7:1,' +
    'e:5,4a:w,c:8,1:1x,1:l,c:16,4:4,c:g,3:0,3:1y,1:0,1:56,2:1q,d:3,1:n,i:0,q:1,d:0,2e:2c,1c:1x,6:0,' +
    '3:2,2:3,3:3,b:1,7:8,6b:b,4:0,7v:1a,1:9,1:54,34:c,3:a,3:1k,1:0,4:f,2:b,4:9,zr:1ekd,2:1ekd,e1oj.0,' +
    'u.2n,3k.6n';
  let widthStarts;
  let widthEnds;
  let widthValues;
  function loadWidthTable() {
    widthStarts = newList();
    widthEnds = newList();
    widthValues = newList();
    let last = -1;
    let pos = 0;
    const s = WIDTH_TABLE;
    while (pos < s.length) {
      let comma = StringPrototypeIndexOf(s, ',', pos);
      if (comma === -1) comma = s.length;
      let mark = pos;
      while (StringPrototypeCharCodeAt(s, mark) !== 46 && StringPrototypeCharCodeAt(s, mark) !== 58) mark++;
      const start = last + 1 + NumberParseInt(StringPrototypeSlice(s, pos, mark), 36);
      const end = start + NumberParseInt(StringPrototypeSlice(s, mark + 1, comma), 36);
      push(widthStarts, start);
      push(widthEnds, end);
      push(widthValues, StringPrototypeCharCodeAt(s, mark) === 46 ? 0 : 2);
      last = end;
      pos = comma + 1;
    }
  }
  function codePointWidth(cp) {
    if (cp < 32) return 0;
    if (cp < 127) return 1;
    if (cp >= 0xd800 && cp <= 0xdfff) return 1;
    if (widthStarts === undefined) loadWidthTable();
    let lo = 0;
    let hi = widthStarts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (cp < widthStarts[mid]) hi = mid - 1;
      else if (cp > widthEnds[mid]) lo = mid + 1;
      else return widthValues[mid];
    }
    return 1;
  }
  // Columns needed to display `str`. ASCII is counted directly (controls 0);
  // from the first non-ASCII code unit on, the rest is NFC-normalized and
  // measured per code point, as Node does.
  // Node's getStringWidth (lib/internal/util/inspect.js), as of 20.x-26.x; differs: a width table generated from ICU instead of ICU
  function getStringWidth(str, stripEscapes) {
    if (stripEscapes) str = stripVTControlCharacters(str);
    let width = 0;
    const n = str.length;
    for (let i = 0; i < n; i++) {
      const c = StringPrototypeCharCodeAt(str, i);
      if (c < 127) {
        if (c >= 32) width++;
        continue;
      }
      const rest = StringPrototypeNormalize(StringPrototypeSlice(str, i), 'NFC');
      for (let j = 0; j < rest.length; j++) {
        const cp = StringPrototypeCodePointAt(rest, j);
        if (cp > 0xffff) j++;
        width += codePointWidth(cp);
      }
      break;
    }
    return width;
  }

