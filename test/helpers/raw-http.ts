import { connect } from 'node:net';

/**
 * Sends bytes exactly as given over a TCP socket and returns the status line
 * number and body, so nothing (fetch, URL parsing) normalizes the path
 * before the server sees it.
 */
export function rawRequest(url: string, request: string | Buffer, timeoutMs = 5000): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('raw request timed out'));
    }, timeoutMs);
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (!m) return reject(new Error(`no HTTP response: ${JSON.stringify(text.slice(0, 200))}`));
      resolve({ status: Number(m[1]), headers: head, body: rest.join('\r\n\r\n') });
    });
    socket.write(request);
  });
}

/** A GET (or other method) request line with the raw path, closing the connection after. */
export function rawGet(path: string, token: string, method = 'GET'): string {
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`;
}
