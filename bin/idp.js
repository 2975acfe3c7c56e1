#!/usr/bin/env node
// The operator CLI: `npx idp --help`.
import './node-version.js'; // first: refuses an unsupported Node.js before anything loads
import { setFlagsFromString } from 'node:v8';
import { launch } from './launch.js';

// A command lives for well under a second, so PGlite's WebAssembly runs on V8's baseline compiler
// alone: optimizing its large module in the background costs more CPU than the command, and the
// process's exit waits for that work (about 0.4 s; docs/performance.md "Start-up"). Set before
// the module is compiled, which is when V8 reads them.
setFlagsFromString('--no-wasm-tier-up');
setFlagsFromString('--no-wasm-dynamic-tiering');

await launch('cli/main');
