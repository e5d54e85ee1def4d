// The files each platform package (npm/<target>/) carries besides its `.node` addon, by napi
// target name. The release workflow's build job collects them next to the `.node`
// (scripts/collect-platform-artifact.mjs); its publish job copies them into the platform package
// and its `files` (scripts/fill-platform-packages.mjs).
//
// The Linux sandbox helper (src/bin/sandbox.rs) sits beside the addon, which looks for it there.
// It is built by the same `napi build` (cargo builds every target of the package); the collect
// script looks for it in target/<triple>/release/ and target/release/.
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'

export const PLATFORM_FILES = {
  'linux-x64-gnu': ['code-runtime-native-sandbox'],
  'linux-arm64-gnu': ['code-runtime-native-sandbox'],
  'darwin-x64': [],
  'darwin-arm64': [],
  'win32-x64-msvc': [],
}

/** The extra files of one platform package (none for an unknown target). */
export function platformFiles(target, table = PLATFORM_FILES) {
  return table[target] ?? []
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
