import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlSocketPath, lockDataDir, tryLockDataDir } from '../../src/db/data-dir-lock.js';

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
