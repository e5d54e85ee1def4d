// The oracle of console-isolate.test.mjs, run as a plain Node child process (vitest installs its
// own stack-trace hooks, which would change what Node prints). Reads [{ name, kind, program,
// realm }] as JSON on stdin and writes { [name]: entries[] } on stdout: what Node's console prints
// when the program runs as a strict async function body named program.ts.
import { Console } from 'node:console'
import { Writable } from 'node:stream'
import util from 'node:util'
import vm from 'node:vm'
import { LOG_OPTIONS } from './console-corpus.mjs'

/** V8's default stack text (ErrorUtils::ToString header, CallSite lines) without node: and file: (the oracle itself) frames. */
function withoutNodeFrames(error, sites) {
  let name = error?.name
  let message = error?.message
  name = name === undefined ? 'Error' : String(name)
  message = message === undefined ? '' : String(message)
  // Node's own errors (ERR_* codes) put their code in the header, as Node's formatter does.
  let nodeError = false
  for (let proto = error === null || typeof error !== 'object' ? null : Object.getPrototypeOf(error); proto; proto = Object.getPrototypeOf(proto)) {
    if (Object.getOwnPropertySymbols(proto).some((s) => s.description === 'kIsNodeError')) nodeError = true
  }
  if (nodeError) name = `${name} [${error.code}]`
  const header = name === '' ? message : message === '' ? name : `${name}: ${message}`
  const kept = sites.filter((site) => !/^(node|file):/.test(String(site.getFileName() ?? '')))
  return header + kept.map((site) => `\n    at ${site}`).join('')
}

const threw = (message) => `<<threw ${String(message).split('\n')[0]}>>`

async function run({ kind, program, realm }) {
  const entries = []
  let console
  if (kind === 'console') {
    const stream = new Writable({
      decodeStrings: false,
      write(chunk, _encoding, done) {
        const text = String(chunk)
        entries.push(text.endsWith('\n') ? text.slice(0, -1) : text)
        done()
      },
    })
    console = new Console({ stdout: stream, stderr: stream, colorMode: false, inspectOptions: { ...LOG_OPTIONS } })
  } else {
    console = { log: (...args) => entries.push(util.formatWithOptions(LOG_OPTIONS, ...args)) }
  }
  const source = `"use strict";(async function (console) {\n${program}\n})`
  const options = { filename: 'program.ts', lineOffset: -1 }
  const main = realm === 'main'
  const context = main ? undefined : vm.createContext({})
  const fn = main ? vm.runInThisContext(source, options) : vm.runInContext(source, context, options)
  // The isolate has no frames below the program; Node's own and the oracle's are dropped here,
  // in the program's realm and in Node's (where console.trace captures its stack).
  const realms = main ? [Error] : [Error, vm.runInContext('Error', context)]
  const saved = realms.map((realm) => realm.prepareStackTrace)
  for (const realm of realms) realm.prepareStackTrace = withoutNodeFrames
  try {
    await fn(console)
  } catch (error) {
    entries.push(threw(error?.stack ?? error))
  } finally {
    realms.forEach((realm, i) => {
      realm.prepareStackTrace = saved[i]
    })
  }
  return entries
}

let input = ''
for await (const chunk of process.stdin) input += chunk
const out = {}
for (const job of JSON.parse(input)) out[job.name] = await run(job)
process.stdout.write(JSON.stringify(out))
