/**
 * The sentence a person reads when the server cannot take its address: the
 * cause in words and the option that fixes it, instead of a bare errno.
 */
export function describeListenError(e: unknown, host: string, port: number): string | undefined {
  const code = (e as { code?: unknown } | undefined)?.code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return `cannot listen on ${where}: the port is already in use (another File Cloud or another program); choose another with --port`;
    case 'EACCES':
      return `cannot listen on ${where}: permission denied (ports below 1024 need privileges); choose --port 1024 or above`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${where}: this machine has no such address; check --host (0.0.0.0 listens on every address)`;
    default:
      return undefined;
  }
}
