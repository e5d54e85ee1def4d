// Package entry: both backends as cordis services registering `ctx.codeRuntime`.
import { Service } from 'cordis'
import { defineCodeRuntimes } from './service.mjs'

export const { IsolateCodeRuntime, PythonCodeRuntime } = defineCodeRuntimes(Service)
export { defineCodeRuntimes }
export {
  PORTABLE_RESERVED_WORDS,
  RESERVED_BINDING_GLOBALS,
  RESERVED_ERROR_MEMBERS,
  DUNDER_MEMBER,
} from './reserved.mjs'

export default IsolateCodeRuntime
