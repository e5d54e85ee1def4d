// The host's workflow guest, as the host's workflow engine sends it to a runtime: read from the
// published @deepseek-ai/dsh-workflow-ptc 0.1.6-alpha.1 tarball, fetched with `npm pack` into the
// cache outside the repository (`$CODE_RUNTIME_NATIVE_CACHE`), pinned by the registry's sha1. The
// package itself cannot be a devDependency: its dependency @deepseek-ai/dsh-brand@^0.1.6-alpha.1
// is not published. Nothing of it is kept in this repository.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, symlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cacheRoot } from './registry/verdaccio.mjs'

const PACKAGE = '@deepseek-ai/dsh-workflow-ptc@0.1.6-alpha.1'
const SHASUM = 'c433c4c69d561319a2b782885ed896d8c86b879c'

const CACHE_DIR = join(cacheRoot(), `dsh-workflow-ptc-0.1.6-alpha.1-${SHASUM.slice(0, 12)}`)
/** The unpacked package (its package.json, lib/index.js and lib/types), outside the repository. */
export const PACKAGE_DIR = join(CACHE_DIR, 'package')

/** The package's lib/index.js, fetched and unpacked once per cache. */
function packageSource() {
  const dir = CACHE_DIR
  const file = join(PACKAGE_DIR, 'lib', 'index.js')
  if (!existsSync(file)) {
    const staging = `${dir}.partial-${process.pid}`
    rmSync(staging, { recursive: true, force: true })
    mkdirSync(staging, { recursive: true })
    execFileSync('npm', ['pack', PACKAGE, '--pack-destination', staging, '--loglevel=error'], { cwd: staging, stdio: 'pipe' })
    const tarball = readdirSync(staging).find((name) => name.endsWith('.tgz'))
    const sum = createHash('sha1').update(readFileSync(join(staging, tarball))).digest('hex')
    if (sum !== SHASUM) throw new Error(`${PACKAGE}'s tarball has sha1 ${sum}, not the registry's ${SHASUM}`)
    execFileSync('tar', ['xzf', tarball], { cwd: staging })
    rmSync(dir, { recursive: true, force: true })
    try {
      renameSync(staging, dir)
    } catch (error) {
      rmSync(staging, { recursive: true, force: true })
      if (!existsSync(file)) throw error
    }
  }
  return readFileSync(file, 'utf8')
}

const text = packageSource()
const line = (prefix) => {
  const found = text.split('\n').find((l) => l.startsWith(prefix))
  if (found === undefined) throw new Error(`${PACKAGE}'s lib/index.js has no line starting ${JSON.stringify(prefix)}`)
  return found
}

/**
 * The guest module's source: the package's WORKFLOW_GUEST_SOURCE, a double-quoted JavaScript
 * literal whose only difference from JSON is the raw tabs it holds.
 */
export const WORKFLOW_GUEST_SOURCE = JSON.parse(
  line('const WORKFLOW_GUEST_SOURCE = ').slice('const WORKFLOW_GUEST_SOURCE = '.length).replace(/;$/, '').replaceAll('\t', '\\t'),
)

// The package builds the program from the source this way; the check fails if a release changes it.
const GUEST_URL_LINE = 'const GUEST_URL = `data:text/javascript,${encodeURIComponent(WORKFLOW_GUEST_SOURCE)}`;'
const PROGRAM_LINE =
  'const PROGRAM = `const { runWorkflowGuest } = await import(${JSON.stringify(GUEST_URL)}); return await runWorkflowGuest(workflowHost);`;'
if (line('const GUEST_URL = ') !== GUEST_URL_LINE || line('const PROGRAM = ') !== PROGRAM_LINE) {
  throw new Error(`${PACKAGE} builds its program differently now: read its lib/index.js again`)
}

export const GUEST_URL = `data:text/javascript,${encodeURIComponent(WORKFLOW_GUEST_SOURCE)}`
/** The program the host's workflow engine runs on a `ctx.ptcRuntime`. */
export const PROGRAM = `const { runWorkflowGuest } = await import(${JSON.stringify(GUEST_URL)}); return await runWorkflowGuest(workflowHost);`

/** What the package's lib/index.js imports by bare specifier, besides `node:*`. */
export const ENGINE_IMPORTS = [
  '@deepseek-ai/schemastery',
  '@deepseek-ai/dsh-workflow',
  '@deepseek-ai/dsh-session',
  '@deepseek-ai/dsh-tools',
  '@deepseek-ai/dsh-util-values',
]
const specifiers = [...text.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]).filter((s) => !s.startsWith('node:'))
if (JSON.stringify(specifiers) !== JSON.stringify(ENGINE_IMPORTS)) {
  throw new Error(`${PACKAGE} imports ${JSON.stringify(specifiers)} now, not ${JSON.stringify(ENGINE_IMPORTS)}`)
}

/**
 * The package's lib/index.js made importable against this checkout's own installed host packages:
 * in the cache, per checkout, `node_modules/@deepseek-ai/dsh-workflow-ptc` is a copy of the
 * unpacked package and each of its imports a symbolic link to this checkout's
 * `node_modules/<name>`. Node resolves a module by its real path, so the engine's imports are the
 * very module instances the test imports (its `WorkflowEngine` is the test's, its `SessionId`...).
 * Returns the path of that lib/index.js.
 */
export function importableEngine() {
  const repo = realpathSync(fileURLToPath(new URL('..', import.meta.url)))
  const key = createHash('sha256').update(repo).digest('hex').slice(0, 12)
  const root = join(CACHE_DIR, 'by-checkout', key)
  const entry = join(root, 'node_modules', '@deepseek-ai', 'dsh-workflow-ptc', 'lib', 'index.js')
  const links = ENGINE_IMPORTS.map((name) => [join(root, 'node_modules', name), join(repo, 'node_modules', name)])
  const current = existsSync(entry) && links.every(([link, target]) => {
    try {
      return realpathSync(link) === realpathSync(target)
    } catch {
      return false
    }
  })
  if (current) return entry
  const staging = `${root}.partial-${process.pid}`
  rmSync(staging, { recursive: true, force: true })
  cpSync(PACKAGE_DIR, join(staging, 'node_modules', '@deepseek-ai', 'dsh-workflow-ptc'), { recursive: true })
  for (const [link, target] of links) {
    if (!existsSync(target)) throw new Error(`${PACKAGE} imports ${target.slice(repo.length + 1)}, which this checkout has not installed`)
    const staged = join(staging, link.slice(root.length + 1))
    mkdirSync(dirname(staged), { recursive: true })
    symlinkSync(target, staged, 'dir')
  }
  rmSync(root, { recursive: true, force: true })
  try {
    renameSync(staging, root)
  } catch (error) {
    rmSync(staging, { recursive: true, force: true })
    if (!existsSync(entry)) throw error
  }
  return entry
}
