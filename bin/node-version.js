// Refuses a Node.js outside package.json's "engines" before anything else loads. Imported first by
// every entry point of bin/: on an unsupported Node.js, argon2's native addon built for another
// line can crash the process with a bare "Segmentation fault" and no word of why. Plain JavaScript
// that imports builtins only, so that it runs on any Node.js old enough to be refused.
import { readFileSync } from 'node:fs';

/** package.json's "engines.node", e.g. "^22.12.0 || >=24.11.0". */
export const SUPPORTED_NODE = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  .engines.node;

/** "24.11.0" → [24, 11, 0]; missing parts count as 0. */
function parts(version) {
  const [major = 0, minor = 0, patch = 0] = version.replace(/^v/, '').split('.').map(Number);
  return [major, minor, patch];
}

function compare(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/** Whether `version` satisfies one comparator of a range: ^, ~, >=, >, <=, <, = or a bare version (npm's meaning). */
function satisfiesComparator(version, comparator) {
  const match = /^(\^|~|>=|>|<=|<|=)?v?(\d+(?:\.\d+){0,2})$/.exec(comparator);
  if (!match) throw new Error(`package.json engines.node: cannot read "${comparator}"`);
  const operator = match[1] ?? '=';
  const bound = parts(match[2]);
  const order = compare(version, bound);
  if (operator === '^')
    return order >= 0 && (bound[0] > 0 ? version[0] === bound[0] : version[1] === bound[1]);
  if (operator === '~') return order >= 0 && version[0] === bound[0] && version[1] === bound[1];
  if (operator === '>=') return order >= 0;
  if (operator === '>') return order > 0;
  if (operator === '<=') return order <= 0;
  if (operator === '<') return order < 0;
  return order === 0;
}

/** Whether Node.js `version` ("24.11.0" or "v24.11.0") satisfies `range` (alternatives joined by ||). */
export function nodeSupported(version, range = SUPPORTED_NODE) {
  const parsed = parts(version);
  return range.split('||').some((alternative) =>
    alternative
      .trim()
      .split(/\s+/)
      .every((comparator) => satisfiesComparator(parsed, comparator)),
  );
}

/** The range in words: "^22.12.0 || >=24.11.0" → "22.12 or a later 22.x, or 24.11 or later". */
export function describeNodeRange(range = SUPPORTED_NODE) {
  return range
    .split('||')
    .map((alternative) => {
      const text = alternative.trim();
      const match = /^(\^|>=)(\d+)\.(\d+)(?:\.\d+)?$/.exec(text);
      if (!match) return text;
      return match[1] === '^'
        ? `${match[2]}.${match[3]} or a later ${match[2]}.x`
        : `${match[2]}.${match[3]} or later`;
    })
    .join(', or ');
}

/** The one line that refuses `version`, or undefined when it is supported. */
export function nodeVersionProblem(version = process.versions.node, range = SUPPORTED_NODE) {
  if (nodeSupported(version, range)) return undefined;
  return `idp: Node.js ${version.replace(/^v/, '')} is not supported; use Node.js ${describeNodeRange(range)} (package.json engines: ${range}).`;
}

const problem = nodeVersionProblem();
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
