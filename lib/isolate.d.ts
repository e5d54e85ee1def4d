import { IsolateCodeRuntime } from './index.js'
export default IsolateCodeRuntime
