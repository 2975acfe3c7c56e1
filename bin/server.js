#!/usr/bin/env node
// The service: `npm start`.
import './node-version.js'; // first: refuses an unsupported Node.js before anything loads
import { launch } from './launch.js';

await launch('main');
