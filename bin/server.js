#!/usr/bin/env node
// The service: `npm start`.
import { launch } from './launch.js';

await launch('main');
