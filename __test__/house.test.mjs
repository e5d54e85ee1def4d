// The house rules a newcomer relies on, kept by a test rather than by memory: no Rust file over
// 600 lines (one job per file), and every `docs/<page>.md#<anchor>` the code, the tests and the
// docs cite lands on a heading of that page (GitHub's slugs), so a renamed heading fails here,
// not in a reader's browser.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const MAX_RUST_LINES = 600

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

describe('the house', () => {
  it(`no Rust file is over ${MAX_RUST_LINES} lines`, () => {
    const long = filesUnder('src', ['.rs'])
      .map((file) => [file, fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n').length - 1])
      .filter(([, lines]) => lines > MAX_RUST_LINES)
    expect(long).toEqual([])
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
