#!/usr/bin/env node
// Release workflow, test jobs: a downloaded Actions artifact keeps no file modes (every file is
// 0644), so the platform files of scripts/platform-files.mjs get their stated modes back before
// the suites run the built artifact (the sandbox helper must be executable).
//
//   node scripts/restore-platform-modes.mjs <napi target, e.g. linux-x64-gnu> <dir>
import { applyModes } from './platform-files.mjs'

const [target, dir] = process.argv.slice(2)
if (!target || !dir) {
  process.stderr.write('usage: node scripts/restore-platform-modes.mjs <napi target> <dir>\n')
  process.exit(2)
}
try {
  for (const { name, mode } of applyModes(target, dir)) process.stdout.write(`${name}: mode ${mode.toString(8)}\n`)
} catch (error) {
  process.stderr.write(`${error.message}\n`)
  process.exit(1)
}
