import { request } from 'node:http';

/** One server-sent event as the HTML rules cut them: its comment lines, `id` and `data` (undefined when absent). */
export type SseEvent = { readonly comments: readonly string[]; readonly id?: string; readonly data?: string };

export type EventStreamClient = {
  readonly status: number;
  /** The whole body of an answer that is not a stream (an error's JSON). */
  readonly body: string;
  readonly events: readonly SseEvent[];
  /** True once the server ended the stream (or the answer, when it was not one). */
  readonly ended: boolean;
  /** Waits until `done` holds of the events so far or the stream ends, at most `ms`; says whether `done` held. */
  until(done: (events: readonly SseEvent[]) => boolean, ms: number): Promise<boolean>;
  /** Waits until the server ends the stream, at most `ms`; says whether it did. */
  end(ms: number): Promise<boolean>;
  close(): void;
};

/**
 * GET of an event stream on a connection of its own (no pooling: each stream is one TCP
 * connection, as each browser tab's is), parsed by the rules of HTML's event-stream format.
 * Resolves when the answer's head arrives.
 */
export function openEventStream(url: string, headers: Record<string, string>): Promise<EventStreamClient> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', ...headers }, agent: false }, (res) => {
      const events: SseEvent[] = [];
      const waiters = new Set<() => void>();
      let ended = false;
      let body = '';
      let buffer = '';
      let comments: string[] = [];
      let id: string | undefined;
      let data: string[] = [];
      const wake = () => {
        for (const w of [...waiters]) w();
      };
      const line = (l: string) => {
        if (l === '') {
          if (comments.length > 0 || id !== undefined || data.length > 0) {
            events.push({ comments, ...(id === undefined ? {} : { id }), ...(data.length === 0 ? {} : { data: data.join('\n') }) });
          }
          comments = [];
          id = undefined;
          data = [];
          wake();
        } else if (l.startsWith(':')) comments.push(l.slice(1).trim());
        else if (l.startsWith('id:')) id = l.slice(3).trimStart();
        else if (l.startsWith('data:')) data.push(l.slice(5).trimStart());
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (res.statusCode !== 200) {
          body += chunk;
          return;
        }
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          line(buffer.slice(0, nl).replace(/\r$/, ''));
          buffer = buffer.slice(nl + 1);
        }
      });
      const finish = () => {
        ended = true;
        wake();
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      const waitFor = (done: () => boolean, ms: number) =>
        new Promise<boolean>((ok) => {
          const check = () => {
            if (!done() && !ended) return;
            clearTimeout(timer);
            waiters.delete(check);
            ok(done());
          };
          const timer = setTimeout(() => {
            waiters.delete(check);
            ok(done());
          }, ms);
          waiters.add(check);
          check();
        });
      const client: EventStreamClient = {
        status: res.statusCode ?? 0,
        get body() {
          return body;
        },
        events,
        get ended() {
          return ended;
        },
        until: (done, ms) => waitFor(() => done(events), ms),
        end: (ms) => waitFor(() => ended, ms),
        close: () => {
          req.destroy();
          res.destroy();
        },
      };
      if (res.statusCode !== 200) res.on('end', () => resolve(client));
      else resolve(client);
    });
    req.on('error', reject);
    req.end();
  });
}
