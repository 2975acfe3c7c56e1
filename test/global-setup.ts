import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * Compiles the service once (`npm run build` into dist/) before the tests: the tests that start
 * `bin/idp.js` and `bin/server.js` as child processes run the build (IDP_RUN_BUILD=1, see
 * bin/launch.js), the code the Docker image runs, instead of transpiling the sources at every start.
 */
export default function setup(): void {
  const root = path.resolve(import.meta.dirname, '..');
  execFileSync(path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
}
