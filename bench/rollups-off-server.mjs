// The service with the console's rollups counting nothing: every counting method of the process's
// recorder is replaced by a no-op before the server starts, so that bench/rollups-cost.ts can
// compare the same build with and without the counting. Runs the build (IDP_RUN_BUILD=1).
import { rollups } from '../dist/src/modules/rollups/rollup-recorder.js';

for (const method of ['count', 'response', 'audit', 'tokens', 'code', 'charge'])
  rollups[method] = () => undefined;
await import('../bin/server.js');
