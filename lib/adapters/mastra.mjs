// `code-runtime-native/mastra`: a Mastra Code Mode transport that runs each program in a fresh V8
// isolate of this runtime (lib/adapters/mastra-transport.mjs), and Mastra's Code Mode on it with
// tools that need approval through Mastra's own approval flow (lib/adapters/mastra-approval.mjs).
export { createCodeMode } from './mastra-approval.mjs'
export { CodeRuntimeTransport } from './mastra-transport.mjs'
