#!/usr/bin/env node
// Fills npm/<target>/ for publishing: `napi artifacts` copies each downloaded `.node` into its
// platform package, then the extra files of scripts/platform-files.mjs are copied next to it, given
// the mode that table states (the downloaded artifact has none: every file is 0644), and added to
// that package's `files`. Run after `napi create-npm-dirs`, before `napi prepublish`.
//
//   node scripts/fill-platform-packages.mjs [--artifacts <dir>] [--config-path <napi config>]
//
// <dir> (default `artifacts`) holds one folder per target, `bindings-<target>/`, as the release
// workflow downloads them; `.node` files are found anywhere below it. A missing extra file fails
// the run and names the file and where it was looked for.
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { PLATFORM_FILES, applyModes, platformFiles } from './platform-files.mjs'

const require = createRequire(import.meta.url)

/** The napi CLI's entry script, from this repository's devDependencies. */
export function napiCli() {
  const manifest = require.resolve('@napi-rs/cli/package.json')
  return join(dirname(manifest), JSON.parse(readFileSync(manifest, 'utf8')).bin.napi)
}

export function fillPlatformPackages({ root, artifacts, configPath, table = PLATFORM_FILES, quiet = false }) {
  const napi = napiCli()
  const args = [napi, 'artifacts', '--cwd', root, '--output-dir', artifacts]
  if (configPath) args.push('--config-path', configPath)
  try {
    execFileSync(process.execPath, args, { stdio: quiet ? 'pipe' : 'inherit' })
  } catch (error) {
    throw new Error(`napi artifacts failed: ${error.stderr || error.message}`)
  }
  const { binaryName } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).napi
  const filled = []
  for (const target of Object.keys(table)) {
    const dir = join(root, 'npm', target)
    // Only the targets napi artifacts just filled (those configured and built) get extras.
    if (!existsSync(join(dir, `${binaryName}.${target}.node`))) continue
    const extras = platformFiles(target, table)
    if (extras.length === 0) continue
    const manifestPath = join(dir, 'package.json')
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'))
    for (const { name: file } of extras) {
      const source = join(artifacts, `bindings-${target}`, file)
      if (!existsSync(source)) {
        throw new Error(
          `${target}: ${file} is listed in scripts/platform-files.mjs but is not in ${join(artifacts, `bindings-${target}`)}; ` +
            'the build job must collect it next to the .node (scripts/collect-platform-artifact.mjs)',
        )
      }
      copyFileSync(source, join(dir, file))
      if (!manifest.files.includes(file)) manifest.files.push(file)
      filled.push(`${target}/${file}`)
    }
    applyModes(target, dir, table)
    writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`)
  }
  return filled
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { artifacts: { type: 'string', default: 'artifacts' }, 'config-path': { type: 'string' } } })
  const root = fileURLToPath(new URL('..', import.meta.url))
  const filled = fillPlatformPackages({ root, artifacts: resolve(values.artifacts), configPath: values['config-path'] && resolve(values['config-path']) })
  for (const file of filled) process.stdout.write(`extra file: npm/${file}\n`)
}
