import { startRelay } from './cutting-proxy.js';

/**
 * A TCP proxy in front of PostgreSQL that counts, from both sides' messages:
 * - exchanges: every ReadyForQuery ('Z') ends one (a simple query, or an extended query's Sync),
 *   whatever the statements inside it;
 * - waits (round trips): a client message that asks for an exchange ('Q' or Sync) while none is
 *   outstanding on any connection starts one; exchanges sent behind it before it is answered (a
 *   pipeline, or queries sent at once on several connections) ride in the same wait;
 * - commits that wrote: an exchange that completed a COMMIT, or an INSERT, UPDATE or DELETE on
 *   its own (ReadyForQuery then says idle, not in a transaction): each one is a flush of the
 *   write-ahead log the client waits for.
 * `url` is the database URL with the proxy's address. With FC_PG_LOG=1 each statement the clients
 * send (its SQL when parsed or sent as a simple query) and each Sync goes to stderr.
 */
export type PgRoundTrips = { readonly url: string; readonly count: number; readonly waits: number; readonly commits: number; close(): Promise<void> };

const WRITES = /^(COMMIT|INSERT|UPDATE|DELETE)\b/;

/** Calls `each(type, body)` for every whole message in `pending` from `at` on; returns the unread rest. */
function messages(pending: Buffer, at: number, each: (type: number, body: Buffer) => void): Buffer {
  while (pending.length - at >= 5) {
    const end = at + 1 + pending.readUInt32BE(at + 1);
    if (end > pending.length) break;
    each(pending[at] as number, pending.subarray(at + 5, end));
    at = end;
  }
  return pending.subarray(at);
}

const cString = (b: Buffer, from = 0): string => b.subarray(from, b.indexOf(0, from)).toString();

export async function startPgRoundTrips(databaseUrl: string): Promise<PgRoundTrips> {
  const target = new URL(`http://${new URL(databaseUrl).host}/`);
  const log = process.env.FC_PG_LOG === '1';
  let count = 0;
  let waits = 0;
  let commits = 0;
  let outstanding = 0;
  const relay = await startRelay(target.href, () => target, ({ client, upstream }) => {
    client.pipe(upstream, { end: false });
    // This connection's share of `outstanding`, given back should it close unanswered.
    let mine = 0;
    const asked = () => {
      if (outstanding === 0) waits++;
      outstanding++;
      mine++;
    };
    upstream.on('close', () => {
      outstanding -= mine;
      mine = 0;
    });
    // Client messages: the first (the startup message, no SSL: the URL asks for none) has no type byte.
    let sent: Buffer = Buffer.alloc(0);
    let started = false;
    client.on('data', (chunk: Buffer) => {
      sent = sent.length === 0 ? chunk : Buffer.concat([sent, chunk]);
      let at = 0;
      if (!started) {
        if (sent.length < 4 || sent.length < sent.readUInt32BE(0)) return;
        at = sent.readUInt32BE(0);
        started = true;
        // Answered by the ReadyForQuery that ends the authentication.
        asked();
      }
      sent = messages(sent, at, (type, body) => {
        const kind = String.fromCharCode(type);
        if (kind === 'Q' || kind === 'S') asked();
        if (!log) return;
        if (kind === 'Q') console.error(`pg: Q ${cString(body)}`);
        if (kind === 'P') console.error(`pg: P ${cString(body, body.indexOf(0) + 1)}`);
        if (kind === 'S') console.error('pg: Sync');
      });
    });
    // Server messages: a type byte, then a 4-byte length that counts itself.
    let pending: Buffer = Buffer.alloc(0);
    let wrote = false;
    upstream.on('data', (chunk: Buffer) => {
      client.write(chunk);
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      pending = messages(pending, 0, (type, body) => {
        // CommandComplete: its tag names the statement.
        if (type === 0x43 && WRITES.test(body.subarray(0, body.length - 1).toString())) wrote = true;
        if (type === 0x5a) {
          if (log) console.error(`pg: ready (${outstanding - 1} outstanding)`);
          count++;
          if (mine > 0) {
            mine--;
            outstanding--;
          }
          if (wrote && body[0] === 0x49) commits++;
          if (body[0] === 0x49) wrote = false;
        }
      });
    });
  });
  const url = new URL(databaseUrl);
  url.host = new URL(relay.url).host;
  return {
    url: url.toString(),
    get count() {
      return count;
    },
    get waits() {
      return waits;
    },
    get commits() {
      return commits;
    },
    close: relay.close,
  };
}
