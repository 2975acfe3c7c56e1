import { existsSync } from 'node:fs';
import path from 'node:path';

/** The folder holding package.json: the same from the TypeScript sources and from the compiled dist/. */
function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

export const projectRoot = findProjectRoot(import.meta.dirname);
export const viewsDir = path.join(projectRoot, 'views');
