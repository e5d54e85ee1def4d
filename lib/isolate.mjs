export { IsolateCodeRuntime as default } from './index.mjs'
