#!/usr/bin/env node
// Release workflow, build job: gathers what one platform package ships into one folder, to be
// uploaded as the `bindings-<target>` artifact: the `.node` that `napi build --platform` wrote in
// the repository root, plus the extra files of scripts/platform-files.mjs (looked up in cargo's
// target directory, `CARGO_TARGET_DIR` or target/: <triple>/release/, then release/). The artifact
// keeps no modes; the jobs that download it restore them from that table.
//
//   node scripts/collect-platform-artifact.mjs <napi target, e.g. linux-x64-gnu> <triple> <out dir>
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { builtFile, cargoTargetDir, platformFiles } from './platform-files.mjs'

const [target, triple, out] = process.argv.slice(2)
if (!target || !triple || !out) {
  process.stderr.write('usage: node scripts/collect-platform-artifact.mjs <napi target> <rust triple> <out dir>\n')
  process.exit(2)
}
const root = fileURLToPath(new URL('..', import.meta.url))
const { binaryName } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).napi
mkdirSync(out, { recursive: true })
const addon = `${binaryName}.${target}.node`
if (!existsSync(join(root, addon))) {
  process.stderr.write(`${addon} is not in ${root}: build it first with \`napi build --platform --release --target ${triple}\`\n`)
  process.exit(1)
}
copyFileSync(join(root, addon), join(out, addon))
const extras = platformFiles(target).map(({ name }) => name)
for (const file of extras) {
  const { found, candidates } = builtFile(cargoTargetDir(root), triple, file)
  if (!found) {
    process.stderr.write(`${target}: ${file} (scripts/platform-files.mjs) was not built; looked in:\n  ${candidates.join('\n  ')}\n`)
    process.exit(1)
  }
  copyFileSync(found, join(out, file))
}
process.stdout.write(`collected ${[addon, ...extras].join(', ')} into ${out}\n`)
