// The names adapters put into a program's scope: which are identifiers a program can call by
// name, and which the runtime and the bridge already own.
import { RESERVED_BINDING_GLOBALS } from '../reserved.mjs'
import { BRIDGE_GLOBAL } from './bridge.mjs'

/**
 * Words a generated identifier must not be: every word ECMAScript has reserved or set aside
 * (editions 1 to 3 kept Java's type and modifier words as future reserved words), its literals,
 * and the names strict code cannot bind or that look like values (`arguments`, `eval`,
 * `undefined`).
 */
export const JS_RESERVED_WORDS = Object.freeze(
  new Set([
    // Keywords and literals.
    ...'break case catch class const continue debugger default delete do else export extends'.split(' '),
    ...'finally for function if import in instanceof new return super switch this throw try'.split(' '),
    ...'typeof var void while with yield let await enum null true false'.split(' '),
    // Strict-mode and early future reserved words.
    ...'implements interface package private protected public static'.split(' '),
    ...'abstract boolean byte char double final float goto int long native short synchronized'.split(' '),
    ...'throws transient volatile'.split(' '),
    // Not reserved, but never a tool's name in generated code.
    'arguments',
    'eval',
    'undefined',
  ]),
)

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** A name a program can write as an identifier: ASCII identifier characters, not a reserved word. */
export function isCallableName(name) {
  return IDENTIFIER.test(name) && !JS_RESERVED_WORDS.has(name)
}

/**
 * Why `name` cannot be put into a program's scope, or `undefined`: the runtime binds `console`
 * (and the Python backend's names) as parameters of the program, which would hide a global of
 * that name, and the bridge's hidden namespace is one too.
 */
export function ownedNameProblem(name) {
  if (name === BRIDGE_GLOBAL) return `${JSON.stringify(name)} is the hidden namespace code-runtime-native's adapters use`
  if (RESERVED_BINDING_GLOBALS.has(name)) return `${JSON.stringify(name)} is a name the runtime binds in every program`
  return undefined
}
