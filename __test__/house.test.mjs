// The house rules a newcomer relies on, kept by a test rather than by memory: no Rust file over
// 600 lines (one job per file), Rust imports that point one way (no module cycle), and every
// `docs/<page>.md#<anchor>` the code, the tests and the docs cite lands on a heading of that page
// (GitHub's slugs), so a renamed heading fails here, not in a reader's browser.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const MAX_RUST_LINES = 600
/**
 * The module cycles allowed in src/ (each a set of files that import one another round): none.
 * A new cycle fails the test.
 */
const KNOWN_CYCLES = []

/** Every file under `dir` (relative to the repository) whose name ends in one of `endings`. */
function filesUnder(dir, endings) {
  const found = []
  const walk = (at) => {
    for (const entry of fs.readdirSync(path.join(ROOT, at), { withFileTypes: true })) {
      const rel = path.join(at, entry.name)
      if (entry.isDirectory()) walk(rel)
      else if (endings.some((ending) => entry.name.endsWith(ending))) found.push(rel)
    }
  }
  walk(dir)
  return found
}

/** GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces as `-`. */
function slug(heading) {
  return heading
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

/** The anchors of a Markdown page: its headings' slugs (repeats numbered) and explicit ids. */
function anchorsOf(file) {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '')
  const anchors = new Set()
  const seen = new Map()
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.*)$/gm)) {
    const base = slug(heading)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  for (const [, id] of text.matchAll(/<a id="([^"]+)"/g)) anchors.add(id)
  return anchors
}

/** A Rust file's module path (`python::run::end`), `crate` for lib.rs. */
function moduleOf(file) {
  const inner = file.replace(/^src\//, '').replace(/\.rs$/, '').replace(/\/mod$/, '')
  return inner === 'lib' ? 'crate' : inner.split('/').join('::')
}

/**
 * The addon's module graph, file by file: an edge for every `crate::…`, `super::…` or `self::…`
 * path a file names (in `use` and inline, brace groups expanded one level) to the deepest module
 * it reaches; edges to a file's own ancestors (a parent's items) are not imports between rooms.
 */
function moduleGraph() {
  const files = filesUnder('src', ['.rs'])
  const modules = new Set(files.map(moduleOf))
  const deepest = (segments) => {
    for (let n = segments.length; n > 0; n--) {
      const name = segments.slice(0, n).join('::')
      if (modules.has(name)) return name
    }
    return undefined
  }
  const graph = new Map()
  for (const file of files) {
    const self = moduleOf(file)
    const own = self === 'crate' ? [] : self.split('::')
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8').replace(/\/\/.*$/gm, '')
    const edges = new Set()
    for (const [, root, tail, group] of text.matchAll(/\b(crate|super|self)((?:::[A-Za-z_]\w*)+)(::\{[^;]*?\})?/g)) {
      // `self::` is the file's module, `super::` its parent (for a mod.rs as for any file).
      let base = root === 'crate' ? [] : root === 'super' ? own.slice(0, -1) : own
      let rest = tail.split('::').filter(Boolean)
      while (rest[0] === 'super') {
        base = base.slice(0, -1)
        rest = rest.slice(1)
      }
      const paths = [[...base, ...rest]]
      for (const item of group ? group.slice(3, -1).split(',') : []) {
        const head = item.trim().split(/::|\s/)[0]
        if (/^[a-z_]\w*$/.test(head) && head !== 'self') paths.push([...base, ...rest, head])
      }
      for (const target of paths.map(deepest)) {
        if (target !== undefined && target !== self && !self.startsWith(`${target}::`) && target !== 'crate') edges.add(target)
      }
    }
    graph.set(self, edges)
  }
  return graph
}

/** Every strongly connected set of more than one module (Tarjan), each sorted. */
function cyclesOf(graph) {
  let next = 0
  const index = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const found = []
  const visit = (v) => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v), low.get(w)))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)))
    }
    if (low.get(v) === index.get(v)) {
      const set = []
      let w
      do {
        w = stack.pop()
        onStack.delete(w)
        set.push(w)
      } while (w !== v)
      if (set.length > 1) found.push(set.sort())
    }
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return found.sort((a, b) => a[0].localeCompare(b[0]))
}

describe('the house', () => {
  it(`no Rust file is over ${MAX_RUST_LINES} lines`, () => {
    const long = filesUnder('src', ['.rs'])
      .map((file) => [file, fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n').length - 1])
      .filter(([, lines]) => lines > MAX_RUST_LINES)
    expect(long).toEqual([])
  })

  it('Rust imports point one way: no module cycle', () => {
    const graph = moduleGraph()
    // The graph is the crate's: its rooms and their files are all in it, with their imports.
    expect(graph.size).toBeGreaterThan(150)
    expect(graph.get('python::run::end')).toContain('python::process::cgroups')
    expect(cyclesOf(graph)).toEqual(KNOWN_CYCLES)
  })

  it('every cited page#anchor lands on a heading of that page', () => {
    const pages = ['README.md', 'ARCHITECTURE.md', ...filesUnder('docs', ['.md'])]
    const anchors = new Map(pages.map((page) => [page, anchorsOf(page)]))
    const citing = [...pages, ...filesUnder('lib', ['.mjs', '.ts']), ...filesUnder('__test__', ['.mjs', '.ts']), ...filesUnder('src', ['.rs', '.js']), ...filesUnder('py', ['.py'])]
    const broken = []
    let cited = 0
    for (const file of citing) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8')
      for (const [whole, page, anchor] of text.matchAll(/((?:docs\/)?[\w-]+\.md)#([\w-]+)/g)) {
        // A page is named from the repository's root, from the citing file's folder, or as a page of docs/.
        const candidates = [page, path.join(path.dirname(file), page), path.join('docs', page)]
        const target = candidates.find((candidate) => anchors.has(candidate))
        if (target === undefined) continue
        cited++
        if (!anchors.get(target).has(anchor)) broken.push(`${file}: ${whole}`)
      }
    }
    expect(broken).toEqual([])
    // The scan found what the code cites (more than a hundred citations today).
    expect(cited).toBeGreaterThan(100)
  })
})
