import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { describeListenError, portProblem } from '../../src/http/listen-port.js';

/** A server listening on a free port of 127.0.0.1, and that port. */
async function listening(): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as net.AddressInfo).port };
}

describe('the port check before start-up', () => {
  it('names a busy port and PORT', async () => {
    const { server, port } = await listening();
    try {
      expect(await portProblem('127.0.0.1', port)).toBe(
        `port ${port} on 127.0.0.1 is already in use by another process. Stop that process, or set PORT to a free port (e.g. PORT=${port + 1}).`,
      );
    } finally {
      server.close();
    }
  });

  it('releases a free port at once, so that the server can listen on it', async () => {
    const { server, port } = await listening();
    await new Promise((resolve) => server.close(resolve));
    expect(await portProblem('127.0.0.1', port)).toBeUndefined();
    const again = net.createServer();
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject);
      again.listen(port, '127.0.0.1', resolve);
    });
    again.close();
  });

  it('says which setting moves a privileged port or a foreign address, and passes other errors on', () => {
    const error = (code: string) => Object.assign(new Error(code), { code });
    expect(describeListenError(error('EACCES'), '0.0.0.0', 80)).toMatch(
      /^port 80 on 0\.0\.0\.0 needs privileges .* Set PORT to 1024 or above\.$/,
    );
    expect(describeListenError(error('EADDRNOTAVAIL'), '10.9.9.9', 3000)).toMatch(
      /^cannot listen on 10\.9\.9\.9: .* Set HOST/,
    );
    expect(describeListenError(error('EMFILE'), '127.0.0.1', 3000)).toBeUndefined();
  });
});
