import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  controlSocketPath,
  dataDirProblem,
  lockDataDir,
  tryLockDataDir,
} from '../../src/db/data-dir-lock.js';
import { childEnv, runIdp, runNode } from '../helpers/cli.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'idp-lock-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('the data directory lock', () => {
  it('is exclusive until released', async () => {
    const dir = path.join(root, 'a');
    const first = await tryLockDataDir(dir);
    expect(first).not.toBeNull();
    expect(await tryLockDataDir(dir)).toBeNull();
    // The same directory by another spelling is the same lock.
    expect(await tryLockDataDir(`${dir}/../a/`)).toBeNull();
    expect(await tryLockDataDir(path.join(root, 'b'))).not.toBeNull();
    await first?.release();
    const again = await tryLockDataDir(dir);
    expect(again).not.toBeNull();
    await again?.release();
  });

  it('waits for a holder that lets go', async () => {
    const dir = path.join(root, 'c');
    const holder = await tryLockDataDir(dir);
    setTimeout(() => void holder?.release(), 300);
    const waited = await lockDataDir(dir, 5_000);
    expect(waited).not.toBeNull();
    await waited?.release();
    const holder2 = await tryLockDataDir(dir);
    expect(await lockDataDir(dir, 300)).toBeNull();
    await holder2?.release();
  });

  it('is not granted while a server answers on the control socket (another container on the volume)', async () => {
    const dir = path.join(root, 'd');
    const probe = await tryLockDataDir(dir); // creates the directory
    await probe?.release();
    const server = net.createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(controlSocketPath(dir), () => resolve()));
    expect(await tryLockDataDir(dir)).toBeNull();
    await new Promise((resolve) => server.close(resolve));
    const lock = await tryLockDataDir(dir);
    expect(lock).not.toBeNull();
    await lock?.release();
  });

  it('refuses a directory whose control socket path would be too long, saying so', () => {
    const long = path.join(root, 'x'.repeat(120));
    expect(() => controlSocketPath(long)).toThrow(/too long for its control socket.*use a shorter DATA_DIR/);
    expect(controlSocketPath('/srv/idp')).toBe('/srv/idp/idp.sock');
  });
});

describe('a DATA_DIR this process cannot write', () => {
  const expectReadable = (message: string, dir: string) => {
    expect(message).toContain(`DATA_DIR ${dir} is not writable by this process (uid ${process.getuid?.()})`);
    expect(message).toMatch(/chown -R 1000/);
  };

  it('stops the server before the database opens, saying what to do (also as root: a file is in the way)', async () => {
    const file = path.join(root, 'not-a-directory');
    await writeFile(file, 'x');
    const dir = path.join(file, 'data');
    expectReadable((await dataDirProblem(dir)) ?? '', dir);
    const server = await runNode('bin/server.js', [], {
      env: childEnv({ DATA_DIR: dir, PORT: '0', PUBLIC_URL: 'http://127.0.0.1:9', HOST: '127.0.0.1' }),
    });
    expect(server.code).toBe(1);
    expectReadable(server.stderr, dir);
    expect(server.stderr).not.toMatch(/ErrnoError/);
    const cli = await runIdp(['users', 'create', '--username', 'alice', '--password', 'long enough pw'], {
      env: childEnv({ DATA_DIR: dir }),
    });
    expect(cli.code).toBe(1);
    expectReadable(cli.stderr, dir);
  });

  it.skipIf(process.getuid?.() === 0)(
    'a directory without write permission (not as root, who may write anyway)',
    async () => {
      const dir = path.join(root, 'read-only');
      await mkdir(dir);
      await chmod(dir, 0o500);
      try {
        expectReadable((await dataDirProblem(dir)) ?? '', dir);
      } finally {
        await chmod(dir, 0o700);
      }
    },
  );

  it('finds nothing wrong with a writable one, and leaves nothing in it', async () => {
    const dir = path.join(root, 'writable', 'nested');
    expect(await dataDirProblem(dir)).toBeUndefined();
    const { readdir } = await import('node:fs/promises');
    expect(await readdir(dir)).toEqual([]);
  });
});
