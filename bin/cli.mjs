#!/usr/bin/env node
// code-runtime-native run <program> [--bindings <module.mjs>] [--config <json>]
// Runs one program file the way Code Mode does and prints what it printed and returned.
// Exit codes: 0 success, 1 the run failed, 2 misuse.
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { Context } from 'cordis'
import { IsolateCodeRuntime, PythonCodeRuntime } from '../lib/index.mjs'

const USAGE = `usage: code-runtime-native run <program.ts|program.py> [--bindings <module.mjs>] [--config <json>]

  <program>            a TypeScript program (the body of an async function), or a Python
                       program when the file ends in .py
  --bindings <module>  an ES module whose default export (or \`bindings\` export) is an array of
                       namespaces: { global, functions, errorClass? }
  --config <json>      runtime config, e.g. '{"computeMs": 1000}'

Prints each log entry, then the completion value as JSON. A failed run prints
"code run failed (<kind>): <message>" on stderr and exits with 1; misuse exits with 2.`

function misuse(message) {
  process.stderr.write(`code-runtime-native: ${message}\n\n${USAGE}\n`)
  process.exit(2)
}

async function loadBindings(path) {
  if (path === undefined) return []
  let module
  try {
    module = await import(pathToFileURL(resolve(path)).href)
  } catch (error) {
    misuse(`cannot load bindings module ${path}: ${error.message}`)
  }
  const bindings = module.bindings ?? module.default
  const list = Array.isArray(bindings) ? bindings : bindings ? [bindings] : undefined
  if (!list) misuse(`bindings module ${path} must export an array of namespaces (default or \`bindings\`)`)
  return list
}

async function main() {
  let parsed
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: { bindings: { type: 'string' }, config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    })
  } catch (error) {
    misuse(error.message)
  }
  const { values, positionals } = parsed
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  const [command, file, ...rest] = positionals
  if (command !== 'run') misuse(command === undefined ? 'missing command' : `unknown command ${JSON.stringify(command)}`)
  if (file === undefined) misuse('missing program file')
  if (rest.length > 0) misuse(`unexpected arguments: ${rest.join(' ')}`)
  let program
  try {
    program = await readFile(file, 'utf8')
  } catch (error) {
    misuse(`cannot read ${file}: ${error.message}`)
  }
  let config = {}
  if (values.config !== undefined) {
    try {
      config = JSON.parse(values.config)
    } catch (error) {
      misuse(`--config is not JSON: ${error.message}`)
    }
  }
  const bindings = await loadBindings(values.bindings)
  const Runtime = file.endsWith('.py') ? PythonCodeRuntime : IsolateCodeRuntime
  const ctx = new Context()
  let fiber
  try {
    fiber = await ctx.plugin(Runtime, config)
  } catch (error) {
    misuse(error.message)
  }
  let result
  try {
    result = await ctx.codeRuntime.run({ program, bindings })
  } catch (error) {
    misuse(error.message)
  }
  for (const entry of result.logs) process.stdout.write(`${entry}\n`)
  await fiber.dispose()
  if (result.error) {
    process.stderr.write(`code run failed (${result.error.kind}): ${result.error.message}\n`)
    return 1
  }
  if ('value' in result) process.stdout.write(`${JSON.stringify(result.value, null, 2)}\n`)
  return 0
}

process.exitCode = await main()
