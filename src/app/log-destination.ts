import { write, writeSync } from 'node:fs';

/** How long a write that found the pipe full (EAGAIN) waits before it tries again, as sonic-boom does. */
const BUSY_WAIT_MS = 100;
/** How long the last lines, written at exit, may wait for a full pipe. */
const EXIT_WAIT_MS = 1000;

/**
 * The process log's destination (a file descriptor, stdout by default): pino's JSON lines, written in
 * order, asynchronously, the lines that came while one write was out going together in the next.
 *
 * Why not pino's own (sonic-boom): it appends each line to the pending text with `+=` and measures
 * that text's byte length at once, which flattens it — every line copies all that is pending before
 * it, and under load (64 connections, a write in the thread pool for the time of dozens of lines) that
 * was the biggest allocation of a GET (docs/performance.md, "What a 4 KiB GET allocates"). Here each
 * line is kept as it is and the pending lines are joined once, when they are written.
 */
export class LineWriter {
  private pending: string[] = [];
  private writing = false;
  private waiting: Array<(err?: Error) => void> = [];

  constructor(private readonly fd: number) {}

  /** Takes one line (pino's, with its newline); always true: like sonic-boom without maxLength, it never drops. */
  write(line: string): boolean {
    this.pending.push(line);
    if (!this.writing) this.next();
    return true;
  }

  /** Writes what is pending now, before the process exits (what pino has sonic-boom do on exit). */
  flushSync(): void {
    if (this.pending.length === 0) return;
    let buf = Buffer.from(this.pending.join(''));
    this.pending = [];
    // A full pipe is waited for a while (a reader that never reads must not hold the exit for ever);
    // any other error (EPIPE: the reader went away) ends the output, never the process with it.
    const until = Date.now() + EXIT_WAIT_MS;
    while (buf.length > 0) {
      try {
        buf = buf.subarray(writeSync(this.fd, buf));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() > until) return;
      }
    }
  }

  /** Calls back once every line taken so far was handed to the kernel (pino's `logger.flush`). */
  flush(cb?: (err?: Error) => void): void {
    if (!cb) return;
    if (this.writing) this.waiting.push(cb);
    else cb();
  }

  private next(): void {
    if (this.pending.length === 0) {
      this.writing = false;
      const waiting = this.waiting;
      this.waiting = [];
      for (const cb of waiting) cb();
      return;
    }
    this.writing = true;
    const text = this.pending.join('');
    this.pending = [];
    this.send(Buffer.from(text));
  }

  private send(buf: Buffer): void {
    write(this.fd, buf, 0, buf.length, null, (err, written) => {
      if (err) {
        // A full pipe (non-blocking stdout): try the same bytes again a little later. Any other error
        // (EPIPE: the reader of stdout went away) loses these lines and the server goes on serving
        // (docs/operations.md), as the process has nowhere left to say so.
        if (err.code === 'EAGAIN') setTimeout(() => this.send(buf), BUSY_WAIT_MS);
        else this.next();
        return;
      }
      if (written < buf.length) this.send(buf.subarray(written));
      else this.next();
    });
  }
}
