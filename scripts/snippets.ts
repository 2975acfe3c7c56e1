/**
 * Copies the code of docs/snippets/<name>.ts into docs/integrating.md, between
 * `<!-- snippet:<name> -->` and `<!-- /snippet -->`: `npx tsx scripts/snippets.ts`.
 * The snippets are real modules that test/docs/ runs against the service, and a test fails when
 * the guide's copy differs from the file, so the guide cannot drift from tested code.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const guidePath = path.join(root, 'docs', 'integrating.md');
export const snippetsDir = path.join(root, 'docs', 'snippets');

const BLOCK = /<!-- snippet:([a-z0-9-]+) -->\n[\s\S]*?<!-- \/snippet -->/g;

/** The names of the snippet files (`openid-client` for docs/snippets/openid-client.ts). */
export function snippetNames(): string[] {
  return readdirSync(snippetsDir)
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.slice(0, -3))
    .sort();
}

/** The names the guide has a block for, in order. */
export function blocksIn(markdown: string): string[] {
  return [...markdown.matchAll(BLOCK)].map((match) => match[1] as string);
}

/** The code of each snippet block of the guide, by name: what a reader copies. */
export function snippetBlocks(markdown: string): Map<string, string> {
  const code = /<!-- snippet:([a-z0-9-]+) -->\n```ts\n([\s\S]*?)```\n<!-- \/snippet -->/g;
  return new Map([...markdown.matchAll(code)].map((match) => [match[1] as string, match[2] as string]));
}

/** The `sh` block after `<!-- run:NAME -->`: commands the guide tells a reader to run. */
export function shellBlock(markdown: string, name: string): string {
  const match = new RegExp(`<!-- run:${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(markdown);
  if (!match?.[1]) throw new Error(`docs/integrating.md has no <!-- run:${name} --> sh block`);
  return match[1];
}

/** The packages of the `npm install …` line in a snippet's first comment, if it has one. */
export function npmPackages(code: string): string[] {
  const line = /^ \* npm install (.+)$/m.exec(code);
  return line?.[1] ? line[1].trim().split(/\s+/) : [];
}

function render(name: string): string {
  const code = readFileSync(path.join(snippetsDir, `${name}.ts`), 'utf8');
  if (code.includes('```')) throw new Error(`docs/snippets/${name}.ts contains a code fence`);
  return `<!-- snippet:${name} -->\n\`\`\`ts\n${code.endsWith('\n') ? code : `${code}\n`}\`\`\`\n<!-- /snippet -->`;
}

/** The guide with every snippet block replaced by the current file. */
export function updatedGuide(markdown: string): string {
  return markdown.replace(BLOCK, (_block, name: string) => render(name));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const markdown = readFileSync(guidePath, 'utf8');
  const missing = snippetNames().filter((name) => !blocksIn(markdown).includes(name));
  writeFileSync(guidePath, updatedGuide(markdown));
  if (missing.length > 0) {
    console.error(`docs/integrating.md has no <!-- snippet:NAME --> block for: ${missing.join(', ')}`);
    process.exitCode = 1;
  }
}
