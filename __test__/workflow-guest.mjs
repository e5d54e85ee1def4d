// The host's workflow guest, as the host's workflow engine sends it to a runtime: read from the
// published @deepseek-ai/dsh-workflow-ptc 0.1.6-alpha.1 tarball, fetched with `npm pack` into the
// cache outside the repository (`$CODE_RUNTIME_NATIVE_CACHE`), pinned by the registry's sha1. The
// package itself cannot be a devDependency: its dependency @deepseek-ai/dsh-brand@^0.1.6-alpha.1
// is not published. Nothing of it is kept in this repository.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { cacheRoot } from './registry/verdaccio.mjs'

const PACKAGE = '@deepseek-ai/dsh-workflow-ptc@0.1.6-alpha.1'
const SHASUM = 'c433c4c69d561319a2b782885ed896d8c86b879c'

/** The package's lib/index.js, fetched and unpacked once per cache. */
function packageSource() {
  const dir = join(cacheRoot(), `dsh-workflow-ptc-0.1.6-alpha.1-${SHASUM.slice(0, 12)}`)
  const file = join(dir, 'package', 'lib', 'index.js')
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
