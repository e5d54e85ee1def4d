export { PythonCodeRuntime as default } from './index.mjs'
