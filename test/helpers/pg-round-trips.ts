import { startRelay } from './cutting-proxy.js';

/**
 * A TCP proxy in front of PostgreSQL that counts, from the server's messages:
 * - round trips: every ReadyForQuery ('Z') ends one exchange (a simple query, or an extended
 *   query's Sync), whatever the statements inside it;
 * - commits that wrote: an exchange that completed a COMMIT, or an INSERT, UPDATE or DELETE on
 *   its own (ReadyForQuery then says idle, not in a transaction): each one is a flush of the
 *   write-ahead log the client waits for.
 * `url` is the database URL with the proxy's address.
 */
export type PgRoundTrips = { readonly url: string; readonly count: number; readonly commits: number; close(): Promise<void> };

const WRITES = /^(COMMIT|INSERT|UPDATE|DELETE)\b/;

export async function startPgRoundTrips(databaseUrl: string): Promise<PgRoundTrips> {
  const target = new URL(`http://${new URL(databaseUrl).host}/`);
  let count = 0;
  let commits = 0;
  const relay = await startRelay(target.href, () => target, ({ client, upstream }) => {
    client.pipe(upstream, { end: false });
    // Server messages: a type byte, then a 4-byte length that counts itself (no SSL: the URL asks for none).
    let pending: Buffer = Buffer.alloc(0);
    let wrote = false;
    upstream.on('data', (chunk: Buffer) => {
      client.write(chunk);
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      let at = 0;
      while (pending.length - at >= 5) {
        const end = at + 1 + pending.readUInt32BE(at + 1);
        if (end > pending.length) break;
        const type = pending[at];
        // CommandComplete: its tag names the statement.
        if (type === 0x43 && WRITES.test(pending.subarray(at + 5, end - 1).toString())) wrote = true;
        if (type === 0x5a) {
          count++;
          if (wrote && pending[at + 5] === 0x49) commits++;
          if (pending[at + 5] === 0x49) wrote = false;
        }
        at = end;
      }
      pending = pending.subarray(at);
    });
  });
  const url = new URL(databaseUrl);
  url.host = new URL(relay.url).host;
  return {
    url: url.toString(),
    get count() {
      return count;
    },
    get commits() {
      return commits;
    },
    close: relay.close,
  };
}
