import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { shellBlock, snippetBlocks } from '../../scripts/snippets.js';

/**
 * The guide's snippets run the way docs/integrating.md tells a reader to run them: in an empty
 * folder made by its `<!-- run:snippet-folder -->` block (which runs its `npm install …` line),
 * each snippet block saved there as NAME.ts, then `node NAME.ts` with the variables its last
 * lines read. Nothing of this repository is on the way: not its node_modules, tsconfig or tsx.
 */

/**
 * A reader's shell: this test's Node.js first on PATH (so `node` and `npm` are the Node.js 24 the
 * guide names), and none of the npm_* variables that `npm test` sets for this repository.
 */
function shellEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  return { ...env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` };
}

/** A snippet sees only what the guide tells the reader to set, besides PATH and HOME. */
function snippetEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const { PATH, HOME } = shellEnv();
  return { PATH, HOME, ...vars };
}

export interface ReaderFolder {
  /** The folder the guide's block ends in (its `mkdir … && cd …`). */
  dir: string;
  /** What the block left there before the snippets were saved. */
  made: string[];
  installMs: number;
  remove(): Promise<void>;
}

export async function makeReaderFolder(guide: string): Promise<ReaderFolder> {
  const root = await mkdtemp(path.join(tmpdir(), 'idp-guide-reader-'));
  const started = Date.now();
  // The block as written; `pwd` afterwards says where its `cd` left the reader.
  const { stdout } = await promisify(execFile)(
    'bash',
    ['-euo', 'pipefail', '-c', `${shellBlock(guide, 'snippet-folder')}\npwd`],
    { cwd: root, env: shellEnv(), maxBuffer: 16 * 1024 * 1024 },
  ).catch((error: Error & { stdout?: string; stderr?: string }) => {
    throw new Error(`the guide's snippet-folder block failed: ${error.message}\n${error.stderr ?? ''}`);
  });
  const installMs = Date.now() - started;
  const dir = stdout.trim().split('\n').at(-1) ?? root;
  const made = (await readdir(dir)).sort();
  for (const [name, code] of snippetBlocks(guide)) await writeFile(path.join(dir, `${name}.ts`), code);
  return { dir, made, installMs, remove: () => rm(root, { recursive: true, force: true }) };
}

export interface RunningSnippet {
  stdout(): string;
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * `node NAME.ts` in the reader's folder, left running until `stop()`: resolves once its output
 * matches `ready` (a site says where to sign in once it listens), fails if it exits before.
 */
export async function startSnippet(
  folder: ReaderFolder,
  name: string,
  vars: Record<string, string>,
  ready = /Sign in at /,
): Promise<RunningSnippet> {
  const child: ChildProcess = spawn('node', [`${name}.ts`], {
    cwd: folder.dir,
    env: snippetEnv(vars),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise((resolve) => child.once('close', resolve));
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    const timer = setTimeout(
      () => reject(new Error(`node ${name}.ts: not ready in 30 s\n${stderr}`)),
      30_000,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (ready.test(stdout)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`node ${name}.ts exited (${code}) before it was ready:\n${stdout}${stderr}`));
    });
  });
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `node NAME.ts ARGS…` in the reader's folder, to its end. */
export async function runSnippet(
  folder: ReaderFolder,
  name: string,
  vars: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      'node',
      [`${name}.ts`, ...args],
      { cwd: folder.dir, env: snippetEnv(vars) },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') reject(error);
        else resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
      },
    );
  });
}
