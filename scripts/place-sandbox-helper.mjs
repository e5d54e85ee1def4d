// After `napi build` and scripts/link-sandbox-roles.mjs: puts the sandbox helper executable
// (crates/sandbox-helper), its static build for a Python spare's keeper and init, and the Python
// template's library (crates/python-entry) beside the addon,
// where the addon looks for them. Linux only: elsewhere no helper
// ships, and the runtimes start children without it. On Linux a runtime refuses to load without a
// usable helper there (lib/sandbox-helper.mjs) unless its config says `allowUnsandboxed: true`.
import { copyFileSync, chmodSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PYTHON_LIBRARY, SANDBOX_HELPER, SANDBOX_ROLES, builtFile, cargoTargetDir } from './platform-files.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const profile = process.argv.includes('--debug') ? 'debug' : 'release'
const targetDir = cargoTargetDir(root)
const triples = { x64: 'x86_64-unknown-linux-gnu', arm64: 'aarch64-unknown-linux-gnu' }

if (process.platform === 'linux') {
  for (const { name, mode } of [SANDBOX_HELPER, SANDBOX_ROLES, PYTHON_LIBRARY]) {
    const { found: built, candidates } = builtFile(targetDir, triples[process.arch] ?? '', name, profile)
    if (!built) {
      console.error(`${name} was not built (looked in ${candidates.join(', ')}): run the build through \`npm run build\``)
      process.exit(1)
    }
    // Copied beside the target and renamed over it: a file that a running host executes or maps
    // (a template, a spare's keeper) cannot be written in place (ETXTBSY), but can be replaced.
    const placed = join(root, name)
    const partial = `${placed}.${process.pid}.partial`
    copyFileSync(built, partial)
    chmodSync(partial, mode)
    renameSync(partial, placed)
  }
}
