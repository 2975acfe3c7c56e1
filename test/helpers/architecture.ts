import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';

/** A source file: its path from the repository root (with `/`), and its text. */
export interface SourceFile {
  path: string;
  text: string;
}

/** One broken rule, at `file:line`. */
export interface Offence {
  file: string;
  line: number;
  message: string;
}

export interface Import {
  specifier: string;
  /** The imported file from the repository root (`src/http/errors.ts`); null for a package. */
  target: string | null;
  line: number;
  typeOnly: boolean;
  /** `import('…')`: loaded when the code runs, not with the importing module. */
  dynamic: boolean;
}

export const MAX_LINES = 300;

/** Every `.ts` file under `dir` (relative to `root`), read from disk. */
export function readSources(root: string, dir = 'src'): SourceFile[] {
  const files: SourceFile[] = [];
  const walk = (absolute: string): void => {
    for (const entry of readdirSync(absolute, { withFileTypes: true })) {
      const child = join(absolute, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith('.ts')) {
        files.push({ path: relative(root, child).split(sep).join('/'), text: readFileSync(child, 'utf8') });
      }
    }
  };
  walk(join(root, dir));
  return files.sort((a, b) => a.path.localeCompare(b.path));
}

export function describeOffences(offences: readonly Offence[]): string[] {
  return offences.map((o) => `${o.file}:${o.line} ${o.message}`);
}

export function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i += 1) if (text.charCodeAt(i) === 10) line += 1;
  return line;
}

/**
 * The text with comments blanked out (newlines kept, so line numbers hold): block comments that
 * start a line, and `//` comments after whitespace. Good enough for this code base's style, and it
 * keeps `'text/*'` or `https://` in strings intact.
 */
export function withoutComments(text: string): string {
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  return text
    .replace(
      /^([ \t]*)\/\*[\s\S]*?\*\//gm,
      (match, indent: string) => indent + blank(match.slice(indent.length)),
    )
    .replace(/(^|\s)\/\/.*$/gm, (match, before: string) => before + blank(match.slice(before.length)));
}

const STATIC_IMPORT = /^[ \t]*(import|export)\s+(type\s+)?([^;'"]*?)\s*from\s*['"]([^'"]+)['"]/gm;
const BARE_IMPORT = /^[ \t]*import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function resolve(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  return posix.join(dirname(from), specifier).replace(/\.js$/, '.ts');
}

/** The imports and re-exports of a file, static and dynamic. */
export function importsOf(file: SourceFile): Import[] {
  const text = withoutComments(file.text);
  const found: Import[] = [];
  const add = (specifier: string, index: number, typeOnly: boolean, dynamic = false) =>
    found.push({
      specifier,
      target: resolve(file.path, specifier),
      line: lineAt(text, index),
      typeOnly,
      dynamic,
    });
  for (const m of text.matchAll(STATIC_IMPORT)) {
    const clause = m[3] ?? '';
    const names = clause
      .replace(/^[{\s]+|[}\s]+$/g, '')
      .split(',')
      .filter((n) => n.trim() !== '');
    const inlineTypes = clause.trim().startsWith('{') && names.every((n) => /^\s*type\s/.test(n));
    add(m[4] ?? '', m.index, m[2] !== undefined || (names.length > 0 && inlineTypes));
  }
  for (const m of text.matchAll(BARE_IMPORT)) add(m[1] ?? '', m.index, false);
  for (const m of text.matchAll(DYNAMIC_IMPORT)) add(m[1] ?? '', m.index, false, true);
  return found.sort((a, b) => a.line - b.line);
}

/** Query building and raw SQL (Kysely). `.transaction()` and `.with(` are not queries by themselves. */
const SQL_PATTERNS: readonly [RegExp, string][] = [
  [
    /\.(selectFrom|selectNoFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\s*\(/g,
    'query building',
  ],
  [/\bsql\s*(`|<)/g, 'raw sql'],
  [/\bsql\.(raw|ref|table|id|lit|join|val)\b/g, 'raw sql'],
  [/\bCompiledQuery\.raw\b|\.executeQuery\s*\(/g, 'raw sql'],
];

/** Where SQL may be written: repositories and the database layer (migrations/ live outside src/). */
export function mayHoldSql(path: string): boolean {
  return path.endsWith('.repository.ts') || path.startsWith('src/db/') || path.startsWith('migrations/');
}

/** Rule a: no SQL outside `*.repository.ts`, `src/db/` and `migrations/`. */
export function findSqlOutsideRepositories(files: readonly SourceFile[]): Offence[] {
  const offences: Offence[] = [];
  for (const file of files) {
    if (mayHoldSql(file.path)) continue;
    const text = withoutComments(file.text);
    for (const [pattern, kind] of SQL_PATTERNS) {
      for (const m of text.matchAll(pattern)) {
        offences.push({ file: file.path, line: lineAt(text, m.index), message: `${kind}: ${m[0].trim()}` });
      }
    }
  }
  return byPlace(offences);
}

export function countLines(text: string): number {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

/** Rule b: no file over `MAX_LINES` lines. */
export function findLongFiles(files: readonly SourceFile[], max = MAX_LINES): Offence[] {
  return files
    .map((file) => ({ file, lines: countLines(file.text) }))
    .filter(({ lines }) => lines > max)
    .map(({ file, lines }) => ({
      file: file.path,
      line: max + 1,
      message: `${lines} lines (at most ${max})`,
    }));
}

function isFastify(specifier: string): boolean {
  return specifier === 'fastify' || specifier.startsWith('fastify/') || specifier.startsWith('@fastify/');
}

/**
 * Rule c: services and repositories know nothing of HTTP (src/http, src/web, fastify, route
 * plugins), and a repository never calls a service.
 */
export function findLayerViolations(files: readonly SourceFile[]): Offence[] {
  const offences: Offence[] = [];
  for (const file of files) {
    const isService = file.path.endsWith('.service.ts');
    const isRepository = file.path.endsWith('.repository.ts');
    if (!isService && !isRepository) continue;
    const role = isService ? 'a service' : 'a repository';
    for (const imp of importsOf(file)) {
      const t = imp.target;
      let why: string | null = null;
      if (isFastify(imp.specifier)) why = 'fastify';
      else if (t?.startsWith('src/http/')) why = 'src/http';
      else if (t?.startsWith('src/web/')) why = 'src/web';
      else if (t?.endsWith('.routes.ts')) why = 'a route plugin';
      else if (isRepository && t?.endsWith('.service.ts')) why = 'a service';
      if (why)
        offences.push({
          file: file.path,
          line: imp.line,
          message: `${role} imports ${why}: ${imp.specifier}`,
        });
    }
  }
  return byPlace(offences);
}

/**
 * Rule d: nothing imports src/app.ts or src/main.ts (but main.ts starts app.ts), and the leaf
 * src/context.ts imports types only.
 */
export function findEntryImports(files: readonly SourceFile[]): Offence[] {
  const offences: Offence[] = [];
  for (const file of files) {
    for (const imp of importsOf(file)) {
      const entry = imp.target === 'src/app.ts' || imp.target === 'src/main.ts';
      if (entry && !(file.path === 'src/main.ts' && imp.target === 'src/app.ts')) {
        offences.push({ file: file.path, line: imp.line, message: `imports ${imp.target}` });
      }
      if (file.path === 'src/context.ts' && !imp.typeOnly) {
        offences.push({
          file: file.path,
          line: imp.line,
          message: `a value import in the leaf: ${imp.specifier}`,
        });
      }
    }
  }
  return byPlace(offences);
}

/** Rule e: src/lib holds pure helpers that import nothing else from src/. */
export function findImpureLib(files: readonly SourceFile[]): Offence[] {
  const offences: Offence[] = [];
  for (const file of files) {
    if (!file.path.startsWith('src/lib/')) continue;
    for (const imp of importsOf(file)) {
      if (imp.target !== null && !imp.target.startsWith('src/lib/')) {
        offences.push({ file: file.path, line: imp.line, message: `src/lib imports ${imp.target}` });
      }
    }
  }
  return byPlace(offences);
}

export function byPlace(offences: Offence[]): Offence[] {
  return offences.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

/**
 * What loading `entry` loads at once: the files its value imports reach, transitively, and the
 * packages they name. Type-only imports are erased by the compiler, and `import()` waits for the
 * code that calls it.
 */
export function staticClosure(
  sources: readonly SourceFile[],
  entry: string,
): { files: Set<string>; packages: Set<string> } {
  const byPath = new Map(sources.map((file) => [file.path, file]));
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (path: string): void => {
    if (files.has(path)) return;
    files.add(path);
    const file = byPath.get(path);
    if (!file) return;
    for (const found of importsOf(file)) {
      if (found.typeOnly || found.dynamic) continue;
      if (found.target) visit(found.target);
      else if (!found.specifier.startsWith('node:')) packages.add(found.specifier);
    }
  };
  visit(entry);
  return { files, packages };
}
