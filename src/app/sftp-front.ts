import type { Operations } from '../services/operations.js';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/options.js';
import type { BasicAuthenticator } from '../dav/basic-auth.js';
import type { SshKeyService } from '../services/ssh-keys.js';
import type { AuditEvent } from '../services/audit.js';
import type { Clock } from '../lib/clock.js';
import type { RateLimiter } from '../store/rate-limiter.js';
import type { MetadataStore } from '../store/metadata-store.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Where the SFTP front end listens (--sftp-port), once the app is ready; undefined when it is off. */
    sftpAddress(): AddressInfo | undefined;
  }
}

/**
 * With --sftp-port: the SFTP front end beside the HTTP app, over the same services, listening
 * when the app is ready (before its HTTP port opens, so a taken SFTP port fails the start) and
 * closed with it. Its modules load only then: without the option, ssh2 costs nothing.
 */
export async function installSftp(
  app: FastifyInstance,
  config: Config,
  deps: { store: MetadataStore; operations: Operations; basic: BasicAuthenticator; sshKeys: SshKeyService; throttle: RateLimiter | undefined; clock: Clock; audit: (e: AuditEvent) => Promise<void> },
): Promise<void> {
  let address: AddressInfo | undefined;
  app.decorate('sftpAddress', () => address);
  const port = config.sftpPort;
  if (port === undefined) return;
  const [{ loadHostKey, hostKeyFingerprint }, { createSftpServer }, { createSftpSignIn }] = await Promise.all([import('../sftp/host-key.js'), import('../sftp/server.js'), import('../sftp/sign-in.js')]);
  const hostKey = await loadHostKey({ dataDir: config.dataDir, store: deps.store, shared: config.database.kind === 'postgres' });
  const server = createSftpServer({
    hostKey,
    signIn: createSftpSignIn({ basic: deps.basic, sshKeys: deps.sshKeys, throttle: deps.throttle, clock: deps.clock, audit: deps.audit }),
    services: { operations: deps.operations, stagingDir: join(resolve(config.dataDir), 'tmp'), onFault: (err) => app.log.error({ err }, 'an SFTP request failed') },
    onError: (err) => app.log.warn({ err }, 'SFTP connection error'),
  });
  app.addHook('onReady', async () => {
    address = await server.listen(port, config.sftpHost || config.host);
    // The fingerprint clients show on their first connection: an operator compares the two (docs/sftp.md).
    app.log.info({ sftp: `${address.address}:${address.port}`, host_key: hostKeyFingerprint(hostKey) }, 'SFTP listening');
  });
  app.addHook('onClose', async () => server.close());
}
