// Package entry: both backends as cordis services, registering `ctx.codeRuntime` (hosts up to 0.1.5)
// and `ctx.ptcRuntime` (hosts from 0.1.6).
import { Service } from 'cordis'
import { defineCodeRuntimes } from './service.mjs'

export const { IsolateCodeRuntime, PythonCodeRuntime } = defineCodeRuntimes(Service)
export { defineCodeRuntimes }
// The current seam (`ctx.ptcRuntime`), also at the `code-runtime-native/ptc` subpath.
export { IsolatePtcRuntime, PythonPtcRuntime, definePtcRuntimes } from './ptc/index.mjs'
// Durable runs (docs/durable.md): a binding throws `suspend(data)` to pause `runDurable()`.
export { JOURNAL_VERSION, MAX_JOURNAL_BYTES, RunSuspension, suspend } from './durable.mjs'
export {
  PORTABLE_RESERVED_WORDS,
  RESERVED_BINDING_GLOBALS,
  RESERVED_ERROR_MEMBERS,
  DUNDER_MEMBER,
} from './reserved.mjs'

export default IsolateCodeRuntime
