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
  const stdout = new LineWriter(1);
  process.once('exit', () => stdout.flushSync());
  return pino(options, stdout);
}
