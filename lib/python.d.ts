import { PythonCodeRuntime } from './index.js'
export default PythonCodeRuntime
