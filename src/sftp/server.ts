import type { AddressInfo, Socket } from 'node:net';
import ssh2, { type Connection, type Session, type SFTPWrapper } from 'ssh2';
import type { Principal } from '../domain/principal.js';
import { announceExtensions } from './extensions.js';
import { serveSftp, type SftpServices } from './session.js';
import type { createSftpSignIn } from './sign-in.js';

/**
 * Modern algorithms only: Curve25519 key exchange, an Ed25519 host key, and AEAD ciphers
 * (ChaCha20-Poly1305, AES-GCM), whose own tags authenticate every packet; the MACs are listed only
 * because the handshake names one, and only encrypt-then-MAC ones.
 */
export const SFTP_ALGORITHMS = {
  kex: ['curve25519-sha256', 'curve25519-sha256@libssh.org'],
  serverHostKey: ['ssh-ed25519'],
  cipher: ['chacha20-poly1305@openssh.com', 'aes256-gcm@openssh.com', 'aes128-gcm@openssh.com'],
  hmac: ['hmac-sha2-256-etm@openssh.com', 'hmac-sha2-512-etm@openssh.com'],
  compress: ['none'],
} as const;

/** The extensions the sessions answer (session.ts), named in the VERSION answer so clients use them. */
const EXTENSIONS = { 'posix-rename@openssh.com': '1' } as const;

/** A silent client is asked every 15 s and dropped after 4 unanswered asks (its staged writes go with it). */
const KEEPALIVE_MS = 15_000;
const KEEPALIVE_MAX = 4;

/** What ssh2's server-side SFTP stream keeps of its channel (it emulates a Channel without `exit`). */
type ChannelOf = { outgoing?: { id: number; state: string }; _protocol?: { exitStatus(id: number, status: number): void } };

/**
 * The client ended the subsystem (EOF): answer as OpenSSH's sftp-server does when it exits, with
 * exit status 0 and the channel closed; `scp` counts a missing status as a failure.
 */
function endSubsystem(sftp: SFTPWrapper): void {
  const c = sftp as unknown as ChannelOf;
  if (c.outgoing?.state === 'open') c._protocol?.exitStatus(c.outgoing.id, 0);
  sftp.end();
}

/**
 * Holds the socket's writes until the loop's check phase: the answers to the WRITEs one read of
 * the socket brought (a client keeps up to 64 in flight) then leave in one socket write. Only
 * WRITEs ask for it: a READ's answer waits for storage and goes out on its own, as soon as it can.
 */
function answersTogether(sock: Socket): () => void {
  let held = false;
  return () => {
    if (held) return;
    held = true;
    sock.cork();
    setImmediate(() => {
      held = false;
      sock.uncork();
    });
  };
}

export type SftpServer = {
  listen(port: number, host: string): Promise<AddressInfo>;
  /** Stops accepting and ends every connection (their unfinished writes leave nothing). */
  close(): Promise<void>;
};

/**
 * The SSH server of the SFTP front end: signs clients in and opens the `sftp` subsystem on a
 * session channel; every other channel and request (shell, exec, port and agent forwarding, X11,
 * other subsystems) is refused. The sessions themselves are src/sftp/session.ts.
 */
export function createSftpServer(deps: {
  hostKey: string;
  signIn: ReturnType<typeof createSftpSignIn>;
  services: SftpServices;
  onError: (err: unknown) => void;
}): SftpServer {
  const connections = new Set<Connection>();
  const server = new ssh2.Server({ hostKeys: [deps.hostKey], algorithms: SFTP_ALGORITHMS as unknown as ssh2.Algorithms, ident: 'FileCloud', keepaliveInterval: KEEPALIVE_MS, keepaliveCountMax: KEEPALIVE_MAX }, (client, info) => {
    connections.add(client);
    // Clients wait for each answer before the next request of a small file; Nagle's algorithm would
    // hold an answer back until the client's delayed ACK. OpenSSH's sshd turns it off the same way.
    (client as Connection & { setNoDelay(on: boolean): unknown }).setNoDelay(true);
    const holdAnswers = answersTogether((client as Connection & { _sock: Socket })._sock);
    let principal: Principal | undefined;
    const sessions: { close(): Promise<void> }[] = [];
    const authenticate = deps.signIn(info.ip, () => client.end());
    client.on('authentication', (ctx) => {
      authenticate(ctx).then(
        (p) => {
          if (p) principal = p;
        },
        (err: unknown) => {
          deps.onError(err);
          ctx.reject([]);
        },
      );
    });
    client.on('ready', () => {
      client.on('session', (accept) => {
        const session: Session = accept();
        session.on('sftp', (acceptSftp) => {
          if (!principal) return;
          const sftp = acceptSftp();
          announceExtensions(sftp, EXTENSIONS);
          const served = serveSftp(sftp, principal, { ...deps.services, holdAnswers });
          sessions.push(served);
          sftp.on('end', () => endSubsystem(sftp));
          sftp.on('close', () => void served.close().catch(deps.onError));
        });
        for (const refused of ['pty', 'shell', 'exec', 'subsystem', 'env', 'x11', 'auth-agent', 'window-change', 'signal'] as const) {
          session.on(refused, (_accept: unknown, reject?: () => void) => reject?.());
        }
      });
      client.on('tcpip', (_accept, reject) => reject());
      client.on('openssh.streamlocal', (_accept, reject) => reject());
      client.on('request', (_accept, reject) => reject?.());
    });
    client.on('error', () => undefined);
    client.on('close', () => {
      connections.delete(client);
      for (const s of sessions) void s.close().catch(deps.onError);
    });
  });
  server.on('error', deps.onError);

  return {
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      }),
    close: () =>
      new Promise((resolve) => {
        for (const c of connections) c.end();
        server.close(() => resolve());
        if (!server.listening) resolve();
      }),
  };
}
