import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';

export type PostResult = { readonly status: number };

/**
 * One POST of a webhook to `u`, connected to the address resolved for this delivery (`pinned`),
 * never to a fresh lookup: the `lookup` hook answers every resolution of the host with it, while
 * the Host header and TLS name stay the URL's. Redirects are not followed (a 3xx is an answer like
 * any other); the whole exchange has one deadline; at most `maxResponseBytes` of the answer are
 * read, the rest is cut off, so a hostile endpoint can neither hold a delivery nor fill memory.
 */
export function postWebhook(
  u: URL,
  pinned: { address: string; family: 4 | 6 },
  headers: Record<string, string>,
  body: string,
  opts: { timeoutMs: number; maxResponseBytes: number },
): Promise<PostResult> {
  const lookup = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  }) as unknown as LookupFunction;
  const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<PostResult>((resolve, reject) => {
    const req = send(
      {
        protocol: u.protocol,
        hostname: u.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: u.port || (u.protocol === 'https:' ? 443 : 80),
        path: `${u.pathname}${u.search}`,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'File-Cloud-Webhooks/1' },
        lookup,
        agent: false,
        servername: u.hostname.replace(/^\[(.*)\]$/, '$1'),
      },
      (res: IncomingMessage) => {
        let seen = 0;
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen > opts.maxResponseBytes) {
            // Enough to know the status; the rest is not read.
            res.destroy();
            finish(() => resolve({ status: res.statusCode ?? 0 }));
          }
        });
        res.on('end', () => finish(() => resolve({ status: res.statusCode ?? 0 })));
        res.on('error', (e) => finish(() => reject(e)));
      },
    );
    let done = false;
    const finish = (f: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      req.destroy();
      f();
    };
    const deadline = setTimeout(() => finish(() => reject(new Error(`no answer within ${opts.timeoutMs / 1000} s`))), opts.timeoutMs);
    req.on('error', (e) => finish(() => reject(e)));
    req.end(body);
  });
}
