import { byPlace, lineAt, type Offence, type SourceFile, withoutComments } from './architecture.js';

/** A table named in a query: read (from, join) or written (insert, update, delete). */
export interface TableReference {
  table: string;
  line: number;
  write: boolean;
  via: string;
}

/** Who may query what: the owner of each table, and the few exceptions, each with its reason. */
export interface Ownership {
  /** table → the one file that writes it and queries it on its own. */
  owners: Readonly<Record<string, string>>;
  /** file → why it may name any table (reads and writes). */
  anyTable: Readonly<Record<string, string>>;
  /** Reads of another owner's tables, each pair with its reason. */
  reads: readonly { file: string; tables: readonly string[]; why: string }[];
  /** Writes of another owner's tables inside one statement of the file's own, each with its reason. */
  writes: readonly { file: string; tables: readonly string[]; why: string }[];
}

/** The keys of `interface Database` in src/db/schema.ts, with their lines. */
export function tablesOf(schema: SourceFile): { table: string; line: number }[] {
  const text = withoutComments(schema.text);
  const body = /\binterface\s+Database\s*\{([^}]*)\}/.exec(text);
  if (!body) throw new Error(`${schema.path} declares no interface Database`);
  const start = body.index + body[0].indexOf('{') + 1;
  return [...(body[1] ?? '').matchAll(/^[ \t]*['"]?([A-Za-z_][\w]*)['"]?\s*\??:/gm)].map((m) => ({
    table: m[1] ?? '',
    line: lineAt(text, start + m.index),
  }));
}

const BUILDER =
  /\.(selectFrom|insertInto|updateTable|deleteFrom|mergeInto|replaceInto|(?:inner|left|right|full|cross)Join(?:Lateral)?|from|using)\s*\(\s*/g;
const BUILDER_WRITES = new Set(['insertInto', 'updateTable', 'deleteFrom', 'mergeInto', 'replaceInto']);
const LITERAL = /^(?:'([^']*)'|"([^"]*)")/;

/** The string literals of a builder call's first argument: `'t'`, `'t as x'` or `['a', 'b as c']`. */
function builderArguments(text: string, at: number): string[] {
  const rest = text.slice(at, at + 400);
  const one = LITERAL.exec(rest);
  if (one) return [one[1] ?? one[2] ?? ''];
  const list = /^\[([^\]]*)\]/.exec(rest);
  if (!list) return [];
  return [...(list[1] ?? '').matchAll(/'([^']*)'|"([^"]*)"/g)].map((m) => m[1] ?? m[2] ?? '');
}

/** Index just past the template literal whose body starts at `i` (after its backtick). */
function skipTemplate(text: string, i: number, literal?: [number, number][]): number {
  let from = i;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\') i += 2;
    else if (c === '`') {
      literal?.push([from, i]);
      return i + 1;
    } else if (c === '$' && text[i + 1] === '{') {
      literal?.push([from, i]);
      i = skipExpression(text, i + 2);
      from = i;
    } else i += 1;
  }
  return i;
}

/** Index just past the `}` closing a `${` expression whose text starts at `i`. */
function skipExpression(text: string, i: number): number {
  let depth = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '`') i = skipTemplate(text, i + 1);
    else if (c === "'" || c === '"') {
      i += 1;
      while (i < text.length && text[i] !== c) i += text[i] === '\\' ? 2 : 1;
      i += 1;
    } else if (c === '{') {
      depth += 1;
      i += 1;
    } else if (c === '}') {
      if (depth === 0) return i + 1;
      depth -= 1;
      i += 1;
    } else i += 1;
  }
  return i;
}

const SQL_TAG = /\bsql\s*(?:<[^`]*?>)?\s*`/g;
const NAME = String.raw`"?[A-Za-z_]\w*"?`;
const KEYWORD = String.raw`(?:join|inner|left|right|full|cross|natural|lateral|on|using|where|set|group|order|limit|offset|returning|for|union|having|values|select)\b`;
const ITEM = String.raw`${NAME}(?:\s+(?:as\s+)?(?!${KEYWORD})[A-Za-z_]\w*)?`;
/** `from a x, b as y`, `join t`, `update t`, `into t`, `delete from t`: the names after the keyword. */
const RAW = new RegExp(
  String.raw`\b(delete\s+from|from|join|update|into)\s+(${ITEM}(?:\s*,\s*${ITEM})*)`,
  'gi',
);

/**
 * The text of the `sql`-tagged templates only (their literal parts, without `${…}` and `--`
 * comments); everything else blanked, newlines kept, so an index is a place in the file.
 */
function rawSqlText(text: string): string {
  const chars = text.replace(/[^\n]/g, ' ').split('');
  for (const m of text.matchAll(SQL_TAG)) {
    const parts: [number, number][] = [];
    skipTemplate(text, m.index + m[0].length, parts);
    for (const [from, to] of parts) {
      const literal = text.slice(from, to).replace(/--[^\n]*/g, (c) => ' '.repeat(c.length));
      for (let i = 0; i < literal.length; i += 1) chars[from + i] = literal[i] ?? ' ';
    }
  }
  return chars.join('');
}

/** Every reference of a schema table in query building and in raw `sql` templates. */
export function tableReferences(file: SourceFile, tables: ReadonlySet<string>): TableReference[] {
  const text = withoutComments(file.text);
  const found: TableReference[] = [];
  for (const m of text.matchAll(BUILDER)) {
    const method = m[1] ?? '';
    for (const argument of builderArguments(text, m.index + m[0].length)) {
      const table = argument.trim().split(/\s+/)[0] ?? '';
      if (tables.has(table)) {
        const line = lineAt(text, m.index);
        found.push({ table, line, write: BUILDER_WRITES.has(method), via: `${method}('${argument}')` });
      }
    }
  }
  const raw = rawSqlText(text);
  for (const m of raw.matchAll(RAW)) {
    const keyword = (m[1] ?? '').toLowerCase().replace(/\s+/g, ' ');
    for (const item of (m[2] ?? '').split(',')) {
      const table = (item.trim().split(/\s+/)[0] ?? '').replace(/"/g, '');
      if (!tables.has(table)) continue;
      const write = keyword !== 'from' && keyword !== 'join';
      found.push({ table, line: lineAt(raw, m.index), write, via: `sql: ${keyword} ${table}` });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

/** Where table ownership is checked: all of src/ but the database layer (and migrations/). */
function isChecked(path: string): boolean {
  return !path.startsWith('src/db/') && !path.startsWith('migrations/');
}

/**
 * Each table written only by its owner, and read elsewhere only where `reads` allows the pair; every
 * table of the schema has an owner, and the owner map names only tables of the schema.
 */
export function findOwnershipOffences(
  schema: SourceFile,
  files: readonly SourceFile[],
  rules: Ownership,
): Offence[] {
  const offences: Offence[] = [];
  const declared = tablesOf(schema);
  const tables = new Set(declared.map((d) => d.table));
  for (const { table, line } of declared) {
    if (!rules.owners[table]) offences.push({ file: schema.path, line, message: `${table} has no owner` });
  }
  for (const table of Object.keys(rules.owners)) {
    if (!tables.has(table)) {
      offences.push({ file: schema.path, line: 0, message: `the owner map names ${table}, not a table` });
    }
  }
  const pairs = (list: Ownership['reads']) =>
    new Set(list.flatMap((r) => r.tables.map((t) => `${r.file} ${t}`)));
  const allowed = pairs(rules.reads);
  const allowedWrites = pairs(rules.writes);
  for (const file of files) {
    if (!isChecked(file.path) || rules.anyTable[file.path] !== undefined) continue;
    for (const ref of tableReferences(file, tables)) {
      const owner = rules.owners[ref.table];
      if (owner === file.path) continue;
      const pair = `${file.path} ${ref.table}`;
      if (ref.write ? allowedWrites.has(pair) : allowed.has(pair)) continue;
      const verb = ref.write ? 'writes' : 'reads';
      const whose = owner ? `owned by ${owner}` : 'no owner';
      offences.push({
        file: file.path,
        line: ref.line,
        message: `${verb} ${ref.table} (${whose}): ${ref.via}`,
      });
    }
  }
  return byPlace(offences);
}

/** Allowed reads and writes that no file makes any more, so that the lists stay as short as the code. */
export function unusedReadAllowances(
  schema: SourceFile,
  files: readonly SourceFile[],
  rules: Ownership,
): string[] {
  const tables = new Set(tablesOf(schema).map((d) => d.table));
  const made = new Set(
    files.flatMap((file) => tableReferences(file, tables).map((ref) => `${file.path} ${ref.table}`)),
  );
  return [...rules.reads, ...rules.writes]
    .flatMap((r) => r.tables.map((t) => `${r.file} ${t}`))
    .filter((pair) => !made.has(pair));
}
