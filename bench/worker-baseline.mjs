// The way the replaced backend ran programs, as a baseline for the cold-run benchmarks: a fresh
// worker_threads Worker per run (env: {}, execArgv: []), program posted in, result posted back.
import { Worker } from 'node:worker_threads'

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads')
const AsyncFunction = (async () => {}).constructor
parentPort.once('message', async (program) => {
  try {
    const value = await new AsyncFunction(program)()
    parentPort.postMessage({ logs: [], value })
  } catch (error) {
    parentPort.postMessage({ logs: [], error: { kind: 'exception', message: String(error?.stack ?? error) } })
  }
})`

/** Runs `program` in a fresh Worker and resolves its result once the Worker has terminated. */
export function workerRun(program) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, env: {}, execArgv: [] })
    worker.once('message', (result) => {
      worker.terminate().then(() => resolve(result), reject)
    })
    worker.once('error', reject)
    worker.postMessage(program)
  })
}
