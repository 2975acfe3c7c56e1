#!/usr/bin/env node
// The operator CLI: `npx idp --help`.
import { launch } from './launch.js';

await launch('cli/main');
