import type { Config } from '../config/options.js';
import { createLogger } from '../app/logger.js';
import { startServer } from '../main.js';

/** `serve`: runs until SIGTERM or SIGINT, then shuts down gracefully and exits 0. */
export async function runServe(config: Config): Promise<number> {
  const logger = createLogger(config.logLevel);
  const server = await startServer(config, logger);
  if (server.firstAdmin) {
    const how = server.firstAdmin.generated ? 'with this password (shown once)' : 'with the password from FILE_CLOUD_ADMIN_PASSWORD';
    process.stdout.write(`\nFirst run: created user "${server.firstAdmin.username}" ${how}:\n\n    ${server.firstAdmin.generated ? server.firstAdmin.password : '(not shown)'}\n\nChange it with: file-cloud user passwd ${server.firstAdmin.username}\n\n`);
  }
  process.stdout.write(`File Cloud listening on ${server.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'shutting down');
      server.close().then(resolve, (err: unknown) => {
        logger.error({ err }, 'error during shutdown');
        resolve();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  return 0;
}
