import type { Config } from '../config/options.js';
import { createLogger } from '../app/logger.js';
import { startServer } from '../main.js';

/** `serve`: runs until SIGTERM or SIGINT, then shuts down gracefully and exits 0. */
export async function runServe(config: Config): Promise<number> {
  const logger = createLogger(config.logLevel, undefined, config.logFormat);
  // Handlers go in before anything is announced: a supervisor that signals as
  // soon as it reads the listening line must not hit the default action (kill).
  const signalled = new Promise<string>((resolve) => {
    let first = true;
    const on = (signal: string) => {
      // Repeated signals while draining are ignored, so an impatient second one cannot cut uploads short.
      if (!first) return void logger.info({ signal }, 'already shutting down');
      first = false;
      resolve(signal);
    };
    process.on('SIGTERM', () => on('SIGTERM'));
    process.on('SIGINT', () => on('SIGINT'));
  });

  const server = await startServer(config, logger);
  if (server.firstAdmin) {
    const how = server.firstAdmin.generated ? 'with this password (shown once)' : 'with the password from FILE_CLOUD_ADMIN_PASSWORD';
    process.stdout.write(`\nFirst run: created user "${server.firstAdmin.username}" ${how}:\n\n    ${server.firstAdmin.generated ? server.firstAdmin.password : '(not shown)'}\n\nChange it with: file-cloud user passwd ${server.firstAdmin.username}\n\n`);
  }
  process.stdout.write(`File Cloud listening on ${server.url}\n`);
  if (config.publicUrl) process.stdout.write(`Public address (used in share links): ${config.publicUrl}/\n`);

  logger.info({ signal: await signalled }, 'shutting down');
  try {
    await server.close();
  } catch (err) {
    logger.error({ err }, 'error during shutdown');
  }
  return 0;
}
