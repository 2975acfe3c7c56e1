import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error bin/ is plain JavaScript without declarations
import { nodeSupported, nodeVersionProblem, SUPPORTED_NODE } from '../../bin/node-version.js';
import { projectRoot } from '../../src/lib/paths.js';

const supported = nodeSupported as (version: string) => boolean;
const engines = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).engines.node;

describe('the supported Node.js versions', () => {
  it("are package.json's engines, read by bin/node-version.js", () => {
    expect(SUPPORTED_NODE).toBe(engines);
    expect(supported(process.versions.node)).toBe(true); // the Node.js running the tests
  });

  it('are 22.12 and later 22.x, and 24.11 and later', () => {
    for (const version of ['22.12.0', '22.22.1', 'v22.99.0', '24.11.0', '24.21.0', '25.0.0', '26.1.0'])
      expect(supported(version), version).toBe(true);
    for (const version of [
      '18.20.8',
      '20.20.2',
      '22.11.0',
      '22.0.0',
      '23.0.0',
      '23.11.1',
      '24.0.0',
      '24.10.0',
    ])
      expect(supported(version), version).toBe(false);
  });

  it('are named in the one line that refuses another', () => {
    expect(nodeVersionProblem('v20.20.2')).toBe(
      `idp: Node.js 20.20.2 is not supported; use Node.js 22.12 or a later 22.x, or 24.11 or later (package.json engines: ${engines}).`,
    );
    expect(nodeVersionProblem('24.11.0')).toBeUndefined();
  });
});

/** A Node.js 20 on this machine (the system's own), or undefined. */
function findNode20(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    try {
      const version = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim();
      if (version.startsWith('v20.')) return candidate;
    } catch {
      // not there
    }
  }
  return undefined;
}
const node20 = findNode20();

/** Runs `node <script>` with `node` and collects its exit code and output. */
function run(node: string, args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(node, args, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe.skipIf(!node20)('on Node.js 20 (skipped: no Node.js 20 at /usr/bin/node on this machine)', () => {
  it("the server, the CLI and npm start's build step refuse with one line, before loading a native addon", async () => {
    // Every native addon loads through process.dlopen: this preload reports any that does.
    const folder = mkdtempSync(path.join(os.tmpdir(), 'idp-node20-'));
    try {
      const tracer = path.join(folder, 'trace-dlopen.cjs');
      writeFileSync(
        tracer,
        "const dlopen = process.dlopen; process.dlopen = (module, file, ...rest) => { process.stderr.write('dlopen ' + file + '\\n'); return dlopen(module, file, ...rest); };\n",
      );
      const env = {
        PATH: process.env.PATH ?? '',
        NODE_OPTIONS: `--require=${tracer}`,
        PORT: '0',
        DATA_DIR: folder,
      };
      const line = nodeVersionProblem(
        execFileSync(node20 as string, ['--version'], { encoding: 'utf8' }).trim(),
      );
      expect(line).toMatch(/^idp: Node\.js 20\.\d+\.\d+ is not supported; use Node\.js 22\.12/);
      const results = await Promise.all([
        run(node20 as string, ['bin/server.js'], env),
        run(node20 as string, ['bin/server.js'], { ...env, IDP_RUN_BUILD: '0' }), // would load tsx
        run(node20 as string, ['bin/idp.js', 'clients', 'list'], env),
        run(node20 as string, ['bin/build-if-stale.js'], env),
      ]);
      for (const result of results) expect(result).toEqual({ code: 1, stdout: '', stderr: `${line}\n` });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
