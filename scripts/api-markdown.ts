/**
 * Markdown of an OpenAPI 3.1 document: its operations grouped by tag, in the document's tag order,
 * each with its method and path, who may call it, its parameters, its body, its responses' fields
 * and examples. scripts/api-reference.ts writes it into docs/api.md.
 */

export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  examples?: unknown[];
  example?: unknown;
}

interface MediaType {
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  'x-auth'?: string;
  /** Who may call it, when `x-auth` alone says it wrong (the registration routes take their own tokens). */
  'x-caller'?: string;
  parameters?: Array<{ name: string; in: string; required?: boolean; description?: string; schema?: Schema }>;
  requestBody?: { content?: Record<string, MediaType> };
  responses?: Record<string, { description?: string; content?: Record<string, MediaType> }>;
}

export interface OpenApiDocument {
  tags?: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** What each kind of caller sends, as the catalogue names it (`x-auth`). */
const CALLERS: Record<string, string> = {
  public: 'anyone, no credentials',
  bearer: 'an access token: `Authorization: Bearer at_…` (or `DPoP` with its proof, for a bound token)',
  client: 'a registered client: HTTP Basic `client_id:client_secret`, or both in the form body',
  browser: "a person's browser; the answer is an HTML page or a redirect (forms carry a CSRF token)",
  mobile: 'the official mobile app only (its `client_id`, a device key and signatures)',
};

/** A heading's anchor as GitHub writes it. */
export function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** Text safe inside a Markdown table cell. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n+/g, ' ');
}

function literal(value: unknown): string {
  return `\`${JSON.stringify(value)}\``;
}

/** A schema's type in a few words: `string`, `integer`, `"a" \| "b"`, `array of object`, `… or null`. */
export function typeOf(schema: Schema | undefined): string {
  if (!schema) return '';
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return variants.map(typeOf).join(' or ');
  if (schema.const !== undefined) return literal(schema.const);
  const types = [schema.type ?? []].flat();
  const nullable = types.includes('null');
  let base: string;
  if (schema.enum)
    base = schema.enum
      .filter((value) => value !== null)
      .map(literal)
      .join(' | ');
  else if (types.includes('array')) base = `array of ${typeOf(schema.items) || 'any'}`;
  else base = types.filter((type) => type !== 'null').join(' or ') || (schema.properties ? 'object' : 'any');
  if (schema.format) base += ` (${schema.format})`;
  return nullable || schema.enum?.includes(null) ? `${base} or null` : base;
}

/** A schema's bounds: lengths, ranges and pattern. */
function boundsOf(schema: Schema): string[] {
  const bounds: string[] = [];
  if (schema.minLength !== undefined || schema.maxLength !== undefined) {
    bounds.push(`${schema.minLength ?? 0}–${schema.maxLength ?? '…'} characters`);
  }
  // zod writes JavaScript's safe-integer bounds for an unbounded integer: no bound to a reader.
  const max =
    schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER ? schema.maximum : undefined;
  const min =
    schema.minimum !== undefined && schema.minimum > Number.MIN_SAFE_INTEGER ? schema.minimum : undefined;
  if (min !== undefined || max !== undefined) bounds.push(`${min ?? '…'} to ${max ?? '…'}`);
  if (schema.pattern) bounds.push(`pattern \`${schema.pattern}\``);
  return bounds;
}

function describe(schema: Schema, description?: string): string {
  return cell([description ?? schema.description, ...boundsOf(schema)].filter(Boolean).join('; '));
}

/** The object schema inside a schema (itself, an array's items, or a nullable variant). */
function objectOf(schema: Schema | undefined): Schema | undefined {
  if (!schema) return undefined;
  if (schema.properties) return schema;
  if (schema.items) return objectOf(schema.items);
  return (schema.anyOf ?? schema.oneOf)?.map(objectOf).find(Boolean);
}

/** One row per field, nested objects' fields under their dotted names (`user.id`, `results[].id`). */
function fieldRows(schema: Schema, prefix = ''): string[] {
  const rows: string[] = [];
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${name}`;
    const required = schema.required?.includes(name) ? 'yes' : 'no';
    rows.push(`| \`${path}\` | ${cell(typeOf(field))} | ${required} | ${describe(field)} |`);
    const nested = objectOf(field);
    if (nested && nested !== schema) rows.push(...fieldRows(nested, `${path}${field.items ? '[]' : ''}.`));
  }
  return rows;
}

function fieldTable(schema: Schema): string[] {
  const rows = fieldRows(schema);
  return rows.length === 0 ? [] : ['| field | type | required | notes |', '|---|---|---|---|', ...rows];
}

function exampleOf(media: MediaType): unknown {
  if (media.example !== undefined) return media.example;
  const first = Object.values(media.examples ?? {})[0];
  if (first) return first.value;
  return media.schema?.examples?.[0] ?? media.schema?.example;
}

function parametersOf(operation: Operation, where: string): string[] {
  const parameters = (operation.parameters ?? []).filter((parameter) => parameter.in === where);
  if (parameters.length === 0) return [];
  const title = where === 'query' ? 'Query parameters' : where === 'path' ? 'Path parameters' : 'Headers';
  return [
    `${title}:`,
    '',
    '| name | type | required | notes |',
    '|---|---|---|---|',
    ...parameters.map(
      (parameter) =>
        `| \`${parameter.name}\` | ${cell(typeOf(parameter.schema))} | ${parameter.required ? 'yes' : 'no'} | ${describe(parameter.schema ?? {}, parameter.description)} |`,
    ),
    '',
  ];
}

function bodyOf(operation: Operation): string[] {
  const lines: string[] = [];
  for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
    lines.push(`Body (\`${type}\`):`, '');
    const table = media.schema ? fieldTable(media.schema) : [];
    lines.push(...(table.length > 0 ? table : [`${typeOf(media.schema) || 'any'}`]), '');
  }
  return lines;
}

function responsesOf(operation: Operation): string[] {
  const lines: string[] = [];
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (status === '4XX' || status === '5XX') continue;
    const media = Object.entries(response.content ?? {})[0];
    // A page's answer is HTML, which the document does not describe: the caller line says so.
    if (!media && response.description === 'Default Response') continue;
    const label =
      response.description && response.description !== 'Default Response' ? `: ${response.description}` : '';
    lines.push(`Response \`${status}\`${media ? ` (\`${media[0]}\`)` : ''}${cell(label)}`, '');
    if (!media) continue;
    lines.push(...fieldTable(media[1].schema ?? {}));
    const example = exampleOf(media[1]);
    if (example !== undefined)
      lines.push('', 'Example:', '', '```json', JSON.stringify(example, null, 2), '```');
    lines.push('');
  }
  const errors = Object.keys(operation.responses ?? {}).filter((status) => /^[45]XX$/.test(status));
  if (errors.length > 0) lines.push(`Errors (${errors.join(', ')}): the [error body](#errors).`, '');
  return lines;
}

function operationSection(method: string, path: string, operation: Operation): string[] {
  const caller = operation['x-auth'];
  const callerText = operation['x-caller'] ?? (caller ? (CALLERS[caller] ?? caller) : undefined);
  return [
    `### \`${method.toUpperCase()} ${path}\``,
    '',
    ...(operation.summary ? [operation.summary, ''] : []),
    ...(operation.description ? [operation.description, ''] : []),
    ...(callerText ? [`Caller: ${callerText}.`, ''] : []),
    ...parametersOf(operation, 'path'),
    ...parametersOf(operation, 'query'),
    ...parametersOf(operation, 'header'),
    ...bodyOf(operation),
    ...responsesOf(operation),
  ];
}

/** The document's operations as Markdown: a contents list, then one section per tag. */
export function renderOperations(document: OpenApiDocument): string {
  const groups = new Map<string, { description: string; operations: string[][] }>();
  for (const tag of document.tags ?? [])
    groups.set(tag.name, { description: tag.description ?? '', operations: [] });
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = methods[method];
      if (!operation) continue;
      const tag = operation.tags?.[0] ?? 'Other';
      if (!groups.has(tag)) groups.set(tag, { description: '', operations: [] });
      groups.get(tag)?.operations.push(operationSection(method, path, operation));
    }
  }
  const used = [...groups].filter(([, group]) => group.operations.length > 0);
  const contents = used.map(
    ([name, group]) => `- [${name}](#${anchorOf(name)}) (${group.operations.length})`,
  );
  const sections = used.flatMap(([name, group]) => [
    `## ${name}`,
    '',
    ...(group.description ? [group.description, ''] : []),
    ...group.operations.flat(),
  ]);
  return ['## Contents', '', ...contents, '', ...sections]
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
