import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Config } from '../config/options.js';
import { createLogger } from '../app/logger.js';
import { resolveLogFormat } from '../app/pretty-log.js';
import { redactedConfig } from '../config/load.js';
import { dataPaths, openDataDir, startServer } from '../main.js';
import { foldWriteAheadLog } from '../store/sqlite.js';
import { serverExecArgv } from './server-flags.js';
import { thisMachine, workerCount } from './worker-count.js';

type FirstAdmin = { username: string; password: string; generated: boolean } | undefined;

/**
 * `serve`: runs until SIGTERM or SIGINT, then shuts down gracefully and exits 0.
 * With more than one worker, this process is the cluster primary: it prepares
 * the data dir once, forks the workers (which share the port through
 * node:cluster), replaces any that die, and stops them all on a signal.
 * With one (`auto` on a small box), this process serves: a primary would cost
 * a second Node process's memory to restart one worker, which the service
 * manager (the systemd unit's Restart=, Docker's restart policy) does anyway.
 */
export async function runServe(config: Config): Promise<number> {
  // How many processes serve, the primary decides; a worker is one of them.
  const count = cluster.isWorker ? 1 : workerCount(config.workers, thisMachine());
  if (cluster.isPrimary && count === 1) startAgainWithServerFlags();
  outliveClosedStdout();
  // Workers inherit the primary's stdout, so each resolves `auto` the same way.
  const logger = createLogger(config.logLevel, undefined, resolveLogFormat(config.logFormat, process.stdout));
  // Handlers go in before anything is announced: a supervisor that signals as
  // soon as it reads the listening line must not hit the default action (kill).
  const signalled = onShutdownSignal(logger);
  if (cluster.isWorker) return runWorker(config, logger, signalled);
  if (count > 1) return runPrimary(config, count, logger, signalled);

  const server = await startServer(config, logger);
  announce(config, server.url, server.firstAdmin);
  logger.info({ signal: await signalled }, 'shutting down');
  try {
    await server.close();
  } catch (err) {
    logger.error({ err }, 'error during shutdown');
  }
  return 0;
}

/**
 * V8 reads its heap flags only when a process starts, so a single serving
 * process started without them (`npm start`, a service manager's command)
 * replaces itself once with the same command plus the flags a worker gets
 * (src/cli/server-flags.ts). execve(2) keeps the pid, so a supervisor's
 * signals and pid file stay right, and nothing has been opened or printed
 * yet. Where the platform has no execve, it serves as it is.
 */
function startAgainWithServerFlags(): void {
  const execArgv = serverExecArgv(process.execArgv, process.env.NODE_OPTIONS);
  if (execArgv.length === process.execArgv.length || typeof process.execve !== 'function') return;
  try {
    process.execve(process.execPath, [process.execPath, ...execArgv, ...process.argv.slice(1)]);
  } catch {
    // Not available here (ERR_FEATURE_UNAVAILABLE_ON_PLATFORM): V8's defaults, as before.
  }
}

/**
 * A reader of stdout that goes away (`file-cloud serve | head`, a log
 * shipper restarted) ends the output, not the server: without a listener
 * the first write after it (EPIPE) would throw and take the process down.
 */
function outliveClosedStdout(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
}

function onShutdownSignal(logger: Logger): Promise<string> {
  return new Promise<string>((resolve) => {
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
}

function announce(config: Config, url: string, firstAdmin: FirstAdmin): void {
  if (firstAdmin) {
    const how = firstAdmin.generated ? 'with this password (shown once)' : 'with the password from FILE_CLOUD_ADMIN_PASSWORD';
    process.stdout.write(`\nFirst run: created user "${firstAdmin.username}" ${how}:\n\n    ${firstAdmin.generated ? firstAdmin.password : '(not shown)'}\n\nChange it with: file-cloud user passwd ${firstAdmin.username}\n\n`);
  }
  process.stdout.write(`File Cloud listening on ${url}\n`);
  if (config.publicUrl) process.stdout.write(`Public address (used in share links): ${config.publicUrl}/\n`);
}

type FromWorker = { type: 'listening'; url: string } | { type: 'failed'; message: string };

/** A worker: serves until told to stop (SIGTERM from the primary, or a terminal's SIGINT). */
async function runWorker(config: Config, logger: Logger, signalled: Promise<string>): Promise<number> {
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer(config, logger, { worker: true });
  } catch (e) {
    // The primary prints the reason (one line for the whole server) and exits 1. Open connections
    // (a database pool, Redis) would keep a failed worker alive: the primary is waiting for its exit.
    const failed: FromWorker = { type: 'failed', message: e instanceof Error ? e.message : String(e) };
    if (!process.send?.(failed, () => process.exit(1))) process.exit(1);
    return 1;
  }
  process.send?.({ type: 'listening', url: server.url } satisfies FromWorker);
  logger.debug({ signal: await signalled }, 'worker shutting down');
  try {
    await server.close();
  } catch (err) {
    logger.error({ err }, 'error during worker shutdown');
  }
  // The IPC channel to the primary would keep this process alive: close it and let the process end
  // by itself once the last cleanup (staging of cut uploads) has run, as a single process does.
  cluster.worker?.disconnect();
  setTimeout(() => process.exit(0), 10_000).unref();
  return 0;
}

/** Restarts of a crashing worker wait this long, so a worker that cannot start does not spin. */
const RESTART_DELAY_MS = 1000;

async function runPrimary(config: Config, count: number, logger: Logger, signalled: Promise<string>): Promise<number> {
  // Once, before any worker serves: migrations, staging left by a crash, interrupted storage jobs.
  const { store, backend } = await openDataDir(config, true);
  // Before any worker opens the port, so the first request can already sign in; undone when the
  // workers cannot start, so a failed start leaves nobody behind.
  const { createServices } = await import('../app/services.js');
  const users = createServices(config, store, backend, { log: logger }).users;
  const firstAdmin: FirstAdmin = await users.ensureFirstAdmin(config.adminPassword || undefined);
  logger.info({ config: redactedConfig(config), workers: count }, 'effective configuration');
  let stopping = false;
  // From the signal on, a worker's exit is part of the shutdown (they may get the same signal first).
  void signalled.then(() => (stopping = true));
  // The kernel hands new connections to the workers, which accept them themselves. Node's default
  // on Linux, round robin, has the primary accept every connection and pass it on: CPU in the
  // primary, less throughput, and a primary whose memory creeps (docs/performance.md "Workers and nodes"). NODE_CLUSTER_SCHED_POLICY=rr brings it back.
  if (process.env.NODE_CLUSTER_SCHED_POLICY === undefined) cluster.schedulingPolicy = cluster.SCHED_NONE;
  cluster.setupPrimary({ execArgv: serverExecArgv(process.execArgv, process.env.NODE_OPTIONS) });
  const workers = new Set<Worker>();
  const fork = () => {
    const w = cluster.fork();
    workers.add(w);
    return w;
  };

  let url: string;
  try {
    url = await new Promise<string>((resolve, reject) => {
      let ready = 0;
      let first: string | undefined;
      for (let i = 0; i < count; i++) {
        const w = fork();
        w.on('message', (m: FromWorker) => {
          if (m?.type === 'failed') return reject(new Error(m.message));
          if (m?.type !== 'listening') return;
          first ??= m.url;
          if (++ready === count) resolve(first);
        });
        w.once('exit', (code) => {
          if (ready < count) reject(new Error(`a worker exited with code ${code} before it was listening (its error is above)`));
        });
      }
      void signalled.then(() => reject(new Error('stopped before the workers were listening')));
    });
  } catch (e) {
    stopping = true;
    // The workers have the database open too: let them go before undoing first run, so the undo
    // does not race a worker's startup writes (it failed with SQLITE_BUSY once, leaving the admin).
    await Promise.all([...workers].map((w) => new Promise<void>((resolve) => {
      if (w.isDead()) return resolve();
      const timer = setTimeout(() => { w.process.kill('SIGKILL'); resolve(); }, 5000);
      w.once('exit', () => { clearTimeout(timer); resolve(); });
      w.process.kill('SIGTERM');
    })));
    if (firstAdmin) await users.undoFirstAdmin(firstAdmin.username).catch((err: unknown) => logger.warn({ err }, 'removing the first admin of a failed start failed'));
    await store.close();
    await backend.close();
    throw e;
  }

  cluster.on('exit', (w, code, signal) => {
    workers.delete(w);
    if (stopping) return;
    // Ctrl-C in a terminal signals the whole process group: the workers may exit before the
    // primary sees its own signal. Decide after the delay, so a shutdown is not reported as a crash.
    setTimeout(() => {
      if (stopping) return;
      logger.warn({ pid: w.process.pid, code, signal }, 'worker died; starting another');
      // Its last write may be on storage but not in the change journal: the leader, on whichever node,
      // rescans once the dead worker's liveness lease has run out (src/cluster/liveness.ts).
      fork();
    }, RESTART_DELAY_MS).unref();
  });

  await store.close();
  await backend.close();
  announce(config, url, firstAdmin);

  logger.info({ signal: await signalled }, 'shutting down');
  stopping = true;
  // Each worker drains its own requests (up to its grace period) and exits.
  await Promise.all(
    [...workers].map(
      (w) =>
        new Promise<void>((resolve) => {
          if (w.isDead()) return resolve();
          w.once('exit', () => resolve());
          w.process.kill('SIGTERM');
        }),
    ),
  );
  if (config.database.kind === 'sqlite') {
    try {
      foldWriteAheadLog(dataPaths(config.dataDir).db);
    } catch (err) {
      logger.error({ err }, 'error during shutdown');
    }
  }
  return 0;
}
