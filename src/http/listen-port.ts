import net from 'node:net';

/**
 * What stops the server from listening on `host:port`, said in one line with the setting that moves
 * it, or undefined for an error that is not about the address.
 */
export function describeListenError(error: unknown, host: string, port: number): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const where = `port ${port} on ${host}`;
  if (code === 'EADDRINUSE')
    return `${where} is already in use by another process. Stop that process, or set PORT to a free port (e.g. PORT=${port === 65535 ? port - 1 : port + 1}).`;
  if (code === 'EACCES')
    return `${where} needs privileges this process does not have (ports below 1024 usually do). Set PORT to 1024 or above.`;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `cannot listen on ${host}: it is not an address of this machine (${code}). Set HOST to one that is, e.g. HOST=127.0.0.1 or HOST=0.0.0.0.`;
  return undefined;
}

/**
 * Binds `host:port` and releases it at once: whether the server will be able to listen there,
 * checked before it creates or migrates a database it would then leave behind. Port 0 (any free
 * port) always can.
 */
export function portProblem(host: string, port: number): Promise<string | undefined> {
  if (port === 0) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error) => {
      const problem = describeListenError(error, host, port);
      if (problem) resolve(problem);
      else reject(error);
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}
