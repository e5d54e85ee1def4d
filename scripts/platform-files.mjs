// The files each platform package (npm/<target>/) carries besides its `.node` addon, by napi
// target name. The release workflow's build job collects them next to the `.node`
// (scripts/collect-platform-artifact.mjs); its publish job copies them into the platform package
// and its `files` (scripts/fill-platform-packages.mjs).
//
// >>> Extra per-platform files go here. <<<
// The Linux sandbox executable, once it is built, is added as:
//   'linux-x64-gnu': ['code-runtime-native-sandbox'],
//   'linux-arm64-gnu': ['code-runtime-native-sandbox'],
// (built by `cargo build --release --bin code-runtime-native-sandbox --target <triple>`; the
// collect script looks for it in target/<triple>/release/ and target/release/).
export const PLATFORM_FILES = {
  'linux-x64-gnu': [],
  'linux-arm64-gnu': [],
  'darwin-x64': [],
  'darwin-arm64': [],
  'win32-x64-msvc': [],
}

/** The extra files of one platform package (none for an unknown target). */
export function platformFiles(target, table = PLATFORM_FILES) {
  return table[target] ?? []
}
