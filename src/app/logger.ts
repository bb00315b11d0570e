import { pino, type Logger } from 'pino';
import { LineWriter } from './log-destination.js';
import { prettyDestination } from './pretty-log.js';
import { redactUrl } from '../http/url.js';

/**
 * The process logger. Request logs carry a redacted URL (path-token query
 * values) and no headers; body fields with secrets are censored wherever
 * they would appear.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream, format: 'json' | 'pretty' = 'json'): Logger {
  const options = {
    level,
    redact: {
      paths: ['password', 'refresh_token', 'access_token', 'token', '*.password', '*.refresh_token', '*.access_token', '*.token', 'req.headers.authorization', 'headers.authorization'],
      censor: '[redacted]',
    },
    serializers: {
      req: (req: { method: string; url: string; ip?: string; id?: string }) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  };
  if (format === 'pretty') return pino(options, prettyDestination(destination ?? process.stdout) as unknown as pino.DestinationStream);
  if (destination) return pino(options, destination as pino.DestinationStream);
  return pino(options, stdoutWriter());
}

let stdout: LineWriter | undefined;
/** One writer for stdout in a process (every logger made without a destination shares it), its lines written out before the process exits. */
function stdoutWriter(): LineWriter {
  if (stdout) return stdout;
  const writer = (stdout = new LineWriter(1));
  process.once('exit', () => writer.flushSync());
  return writer;
}
