// A failed run as the frameworks describe errors (a name, a message, the program's line, the
// stack), and positions in what a run printed moved back to the program's own text. The runtime
// reports `{ kind, message }`; an `exception`'s message is what the program threw, as V8 prints
// it (`TypeError: kaboom\n    at program.ts:2:7`). Every other kind gets a name of its own, so a
// framework that only carries `name` and `message` still tells the kinds apart.

/** The error name each failure kind is reported under (an `exception` keeps the thrown name). */
export const FAILURE_NAMES = Object.freeze({
  exception: 'Error',
  timeout: 'TimeoutError',
  abort: 'AbortError',
  'worker-exit': 'WorkerExitError',
  'invalid-output': 'InvalidOutputError',
  'output-limit': 'OutputLimitError',
  protocol: 'ProtocolError',
  'sandbox-unavailable': 'SandboxUnavailableError',
})

const FRAME = /\n {4}at (?:async )?(?:[^\n]* \()?program\.ts:(\d+):(\d+)\)?/
const FRAMES_START = /\n {4}at /
const NAMED = /^([A-Za-z_$][\w$]*)(?:: ([\s\S]*))?$/

/**
 * @param {{ kind: string, message: string }} error the seam's failure
 * @param {{ prelude?: number, lastLine?: number }} [frame] what of the run's text is the
 *   adapter's: `prelude` characters before the program on its first line (frames there are
 *   dropped, later line-1 columns moved back) and every line after `lastLine` (frames dropped)
 * @returns {{ kind: string, name: string, message: string, line?: number, stack?: string, thrown: boolean }}
 *   `thrown`: the program threw an Error (its name and frames were printed), not another value
 */
export function describeFailure(error, { prelude = 0, lastLine = Infinity } = {}) {
  const { kind } = error
  if (kind !== 'exception') return { kind, name: FAILURE_NAMES[kind] ?? 'Error', message: error.message, thrown: false }
  const text = ownPositions(error.message, { prelude, lastLine })
  const start = text.search(FRAMES_START)
  if (start < 0) return { kind, name: 'Error', message: text, thrown: false }
  const head = text.slice(0, start)
  const named = NAMED.exec(head)
  const described = named
    ? { kind, name: named[1], message: named[2] ?? '', stack: text, thrown: true }
    : { kind, name: 'Error', message: head, stack: text, thrown: true }
  const frame = FRAME.exec(text)
  if (frame) described.line = Number(frame[1])
  return described
}

/**
 * `text` (an error message, a log entry) with the stack frames of the program's own text only,
 * at its own positions: frames in the prelude or after `lastLine` are the adapter's and are
 * dropped, line-1 columns move back by the prelude's length. Other lines are kept as they are.
 */
export function ownPositions(text, { prelude = 0, lastLine = Infinity } = {}) {
  if (!text.includes('program.ts:')) return text
  return text
    .split('\n')
    .flatMap((line) => {
      const at = /^( {4}at (?:async )?(?:[^\n]* \()?program\.ts:)(\d+):(\d+)(\)?)$/.exec(line)
      if (at === null) return [line]
      const row = Number(at[2])
      if (row > lastLine) return []
      if (row !== 1) return [line]
      const column = Number(at[3]) - prelude
      return column > 0 ? [`${at[1]}1:${column}${at[4]}`] : []
    })
    .join('\n')
}
