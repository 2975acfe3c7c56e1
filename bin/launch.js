import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Starts an entry point of the service: from the TypeScript sources in a checkout (through tsx),
 * or from the compiled JavaScript in a built image, which ships dist/ and no src/.
 * IDP_RUN_BUILD=1 runs the compiled dist/ of a checkout (`npm run build`): the test suite builds it
 * once and starts its many child processes from it, which skips tsx's transpiling at every start.
 * @param {string} entry path below src/ without extension, e.g. "main" or "cli/main"
 */
export async function launch(entry) {
  const source = path.join(root, 'src', `${entry}.ts`);
  if (existsSync(source) && process.env.IDP_RUN_BUILD !== '1') {
    const { register } = await import('tsx/esm/api');
    register();
    return import(pathToFileURL(source).href);
  }
  return import(pathToFileURL(path.join(root, 'dist', 'src', `${entry}.js`)).href);
}
