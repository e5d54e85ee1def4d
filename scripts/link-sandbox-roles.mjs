// After `napi build`: links the sandbox helper again, statically (glibc's static-pie), as
// `code-runtime-native-sandbox-roles`, the executable a Python spare's keeper and init exec
// (src/sandbox/harden/enter.rs, `become_helper`): without the dynamic loader, each exec takes
// ~0.3 ms less of the CPU a run costs (docs/performance.md). The helper itself stays dynamic: a
// contained isolate's sandbox process is the helper loading the addon, which a static C library
// cannot do. Where the static link fails (glibc's static libraries, libc6-dev or glibc-static,
// are not installed), the roles file is a copy of the helper, which serves the roles the same way.
//
//   node scripts/link-sandbox-roles.mjs [--debug] [--target <rust triple>]
//
// Its own target directory (target/sandbox-roles/), so the helper's build is never relinked.
// Not on Linux: no helper ships there.
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SANDBOX_HELPER, SANDBOX_ROLES, builtFile, cargoTargetDir } from './platform-files.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const args = process.argv.slice(2)
const debug = args.includes('--debug')
const targetAt = args.indexOf('--target')
const triple = targetAt >= 0 ? args[targetAt + 1] : { x64: 'x86_64-unknown-linux-gnu', arm64: 'aarch64-unknown-linux-gnu' }[process.arch]
const profile = debug ? 'debug' : 'release'

if (process.platform === 'linux') {
  if (!triple) {
    console.error(`no Rust target for ${process.arch}: pass --target <triple>`)
    process.exit(1)
  }
  const targetDir = cargoTargetDir(root)
  const staticDir = join(targetDir, 'sandbox-roles')
  const cargo = [
    'rustc', ...(debug ? [] : ['--release']), '--target', triple, '--target-dir', staticDir,
    '--package', SANDBOX_HELPER.name, '--bin', SANDBOX_HELPER.name, '--', '-C', 'target-feature=+crt-static',
  ]
  const linked = spawnSync('cargo', cargo, { cwd: root, stdio: 'inherit' }).status === 0
  // Beside the helper cargo built, where the place and collect scripts look for each file.
  const dest = join(targetDir, triple, profile, SANDBOX_ROLES.name)
  mkdirSync(dirname(dest), { recursive: true })
  if (linked) {
    copyFileSync(join(staticDir, triple, profile, SANDBOX_HELPER.name), dest)
  } else {
    const { found } = builtFile(targetDir, triple, SANDBOX_HELPER.name, profile)
    if (!found) {
      console.error(`${SANDBOX_HELPER.name} was not built: run \`napi build\` first`)
      process.exit(1)
    }
    console.warn(
      `${SANDBOX_ROLES.name}: the static link failed (are glibc's static libraries, libc6-dev or glibc-static, installed?); ` +
        `it is a copy of ${SANDBOX_HELPER.name}, which serves the same roles through the dynamic loader`,
    )
    copyFileSync(found, dest)
  }
}
