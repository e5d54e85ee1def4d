// The files each platform package (npm/<target>/) carries besides its `.node` addon, by napi
// target name, each with the mode it must have. The release workflow's build job collects them
// next to the `.node` (scripts/collect-platform-artifact.mjs); its publish job copies them into the
// platform package and its `files` (scripts/fill-platform-packages.mjs), and its test jobs run
// them where they were downloaded (scripts/restore-platform-modes.mjs).
//
// The mode is stated here, never taken from the file: an Actions artifact keeps no modes (every
// downloaded file is 0644), so the sandbox helper would otherwise ship without its execute bit and
// every sandboxed child would start without its layers.
//
// The Linux sandbox helper (crates/sandbox-helper) sits beside the addon, which looks for it there.
// It is built by the same `napi build` (crates/sandbox-helper, a default member of the cargo
// workspace); the collect script looks for it in target/<triple>/release/ and target/release/.
import { chmodSync, existsSync, statSync } from 'node:fs'
import { join } from 'node:path'

export const SANDBOX_HELPER = Object.freeze({ name: 'code-runtime-native-sandbox', mode: 0o755 })
// The same helper linked statically (scripts/link-sandbox-roles.mjs): what a Python spare's keeper
// and init exec. The addon uses it when it is beside the helper and runs; else the helper.
export const SANDBOX_ROLES = Object.freeze({ name: 'code-runtime-native-sandbox-roles', mode: 0o755 })
// The Python template's native half (crates/python-entry, a member of the same cargo workspace,
// built by the same `napi build`): the template loads it beside the helper, not the addon.
export const PYTHON_LIBRARY = Object.freeze({ name: 'libcode_runtime_native_python.so', mode: 0o644 })

export const PLATFORM_FILES = {
  'linux-x64-gnu': [SANDBOX_HELPER, SANDBOX_ROLES, PYTHON_LIBRARY],
  'linux-arm64-gnu': [SANDBOX_HELPER, SANDBOX_ROLES, PYTHON_LIBRARY],
  'darwin-x64': [],
  'darwin-arm64': [],
  'win32-x64-msvc': [],
}

/** The extra files of one platform package, `{ name, mode }` each (none for an unknown target). */
export function platformFiles(target, table = PLATFORM_FILES) {
  const files = table[target] ?? []
  for (const file of files) {
    if (typeof file?.name !== 'string' || !Number.isInteger(file.mode)) {
      throw new Error(`${target}: every entry of scripts/platform-files.mjs needs a name and an explicit mode, got ${JSON.stringify(file)}`)
    }
  }
  return files
}

/** Gives each platform file of `target` in `dir` its stated mode; throws when one is missing. */
export function applyModes(target, dir, table = PLATFORM_FILES) {
  const files = platformFiles(target, table)
  for (const { name, mode } of files) {
    const file = join(dir, name)
    if (!existsSync(file)) {
      throw new Error(`${target}: ${name} (scripts/platform-files.mjs) is not in ${dir}, so its mode cannot be set`)
    }
    chmodSync(file, mode)
  }
  return files
}

/** Cargo's target directory for a checkout at `root`, as cargo itself picks it. */
export function cargoTargetDir(root, env = process.env) {
  return env.CARGO_TARGET_DIR ?? env.CARGO_BUILD_TARGET_DIR ?? join(root, 'target')
}

/**
 * Where cargo left a built file of this package: `napi build` passes `--target <triple>`, so it
 * writes under target/<triple>/<profile>/; a plain `cargo build` under target/<profile>/. The newest
 * wins; `undefined` when neither has it. `candidates` lists where it looked.
 */
export function builtFile(targetDir, triple, file, profile = 'release') {
  const candidates = [join(targetDir, triple, profile, file), join(targetDir, profile, file)]
  const found = candidates.filter((p) => existsSync(p)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]
  return { found, candidates }
}
