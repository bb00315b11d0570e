// Continuous mode does not walk the folder every round: the watcher names the local changes, and a
// full stat pass of the folder runs at the start and then every FILE_CLOUD_SYNC_STAT_PASS_MS (an
// hour by default). The client logs each pass ("stat pass N: …"), which the test counts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BACKENDS } from '../helpers/app.js';
import { bearer, encodePath } from '../helpers/client.js';
import { readState, REPO, RUN_TIMEOUT_MS, syncServer, twoDevices, until, type Device } from '../helpers/sync-device.js';

/** The contract's bound for continuous mode: a change on either side reaches the other within 5 s. */
const CONTINUOUS_BOUND_MS = 5_000;

for (const [storage, skip] of BACKENDS) {
  describe(`sync: continuous mode's stat passes (${storage})`, { skip }, () => {
    const s = syncServer(storage);
    const serverText = async (rel: string): Promise<string | undefined> => {
      const res = await fetch(`${s.url}/storage/alice/Sync/${encodePath(rel)}`, { headers: bearer(s.token) });
      return res.status === 200 ? res.text() : undefined;
    };
    const localText = (d: Device, rel: string): Promise<string | undefined> => readFile(d.file(rel), 'utf8').catch(() => undefined);

    /** The client running continuously; its stdout gathered. */
    function continuous(d: Device, statPassMs: number): { out: { stdout: string }; passes: () => number; pid: number; signal: (sig: NodeJS.Signals) => void; stop: () => Promise<void> } {
      const child = spawn(process.execPath, [join(REPO, 'packages/sync/bin/file-cloud-sync.js'), d.dir, '/alice/Sync', '--server', s.url, '--device', d.name, '--state-dir', d.stateDir], {
        env: { ...process.env, FILE_CLOUD_SYNC_KEY: s.key, FILE_CLOUD_SYNC_STAT_PASS_MS: String(statPassMs) },
      });
      const out = { stdout: '' };
      child.stdout.on('data', (c: Buffer) => (out.stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out.stdout += c.toString()));
      const exited = new Promise<void>((r) => child.on('exit', () => r()));
      return {
        out,
        passes: () => out.stdout.match(/^stat pass \d+:/gm)?.length ?? 0,
        pid: child.pid as number,
        signal: (sig) => void child.kill(sig),
        stop: async () => {
          child.kill('SIGCONT');
          child.kill('SIGTERM');
          await exited;
        },
      };
    }

    test('changes on both sides sync within 5 s with one stat pass only: the start\'s', async () => {
      const [a] = await twoDevices(s);
      for (let i = 0; i < 20; i++) await writeFile(a.file(`f${i}.txt`), `file ${i}`);
      const run = continuous(a, 3_600_000);
      try {
        await until(async () => (await readState(a.stateDir))?.lastSync !== undefined, RUN_TIMEOUT_MS, 'the first round');
        assert.equal(run.passes(), 1, run.out.stdout);

        await writeFile(a.file('f3.txt'), 'edited here');
        await until(async () => (await serverText('f3.txt')) === 'edited here', CONTINUOUS_BOUND_MS, 'a local edit on the server');
        await mkdir(a.file('new/deeper'), { recursive: true });
        await writeFile(a.file('new/deeper/n.txt'), 'in a new folder');
        await until(async () => (await serverText('new/deeper/n.txt')) === 'in a new folder', CONTINUOUS_BOUND_MS, 'a file in a new local folder on the server');
        await rename(a.file('f4.txt'), a.file('new/f4.txt'));
        await unlink(a.file('f5.txt'));
        await until(async () => (await serverText('new/f4.txt')) === 'file 4' && (await serverText('f5.txt')) === undefined, CONTINUOUS_BOUND_MS, 'a local rename and delete on the server');

        const put = await fetch(`${s.url}/storage/alice/Sync/remote.txt`, { method: 'PUT', headers: bearer(s.token), body: 'written there' });
        assert.equal(put.status, 201);
        await until(async () => (await localText(a, 'remote.txt')) === 'written there', CONTINUOUS_BOUND_MS, 'a server file here');
        assert.equal(run.passes(), 1, `no round walked the folder again\n${run.out.stdout}`);
      } finally {
        await run.stop();
      }
    });

    test('the start\'s stat pass finds a change made while the client was stopped; passes repeat every FILE_CLOUD_SYNC_STAT_PASS_MS', async () => {
      const [a] = await twoDevices(s);
      await writeFile(a.file('x.txt'), 'one');
      const first = continuous(a, 3_600_000);
      try {
        await until(async () => (await serverText('x.txt')) === 'one', RUN_TIMEOUT_MS, 'the first round');
      } finally {
        await first.stop();
      }
      await writeFile(a.file('x.txt'), 'changed while stopped');
      const statPassMs = 2_000;
      const run = continuous(a, statPassMs);
      try {
        // The start's pass finds it; then a pass every 2 s, whether or not anything changed.
        await until(async () => (await serverText('x.txt')) === 'changed while stopped', CONTINUOUS_BOUND_MS, 'the start\'s stat pass');
        await until(async () => run.passes() >= 3, 3 * statPassMs + CONTINUOUS_BOUND_MS, 'two more stat passes');
      } finally {
        await run.stop();
      }
    });

    // The kernel keeps at most max_queued_events inotify events for a reader; past them it drops the
    // rest (one IN_Q_OVERFLOW, which the watcher does not report). A client stopped (SIGSTOP) while
    // more changes than that happen misses the last ones: only a stat pass finds them.
    const queued = ((): number => {
      try {
        return Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'));
      } catch {
        return 0; // not Linux
      }
    })();
    test('a change the watcher missed (its events dropped by an overflowed inotify queue) is uploaded by the next stat pass', { skip: queued > 0 && queued <= 1_000_000 ? undefined : 'needs Linux inotify with max_queued_events ≤ 1,000,000' }, async () => {
      const [a] = await twoDevices(s);
      await writeFile(a.file('missed.txt'), 'before');
      for (const f of ['churn0.txt', 'churn1.txt']) await writeFile(a.file(f), '');
      // Long enough that the stopped phase (two or three seconds here) cannot reach the second pass.
      const statPassMs = 15_000;
      const run = continuous(a, statPassMs);
      try {
        await until(async () => (await serverText('missed.txt')) === 'before', RUN_TIMEOUT_MS, 'the first round');
        // A round re-stats the paths the one before it wrote: another change makes that round, so
        // missed.txt is nothing the client looks at again until a stat pass.
        await writeFile(a.file('poke.txt'), 'p');
        await until(async () => (await serverText('poke.txt')) === 'p', CONTINUOUS_BOUND_MS, 'a round after the first');
        run.signal('SIGSTOP');
        // Stopped for sure before the churn, so it reads none of the queue meanwhile.
        await until(async () => (await readFile(`/proc/${run.pid}/stat`, 'utf8')).split(') ')[1]?.startsWith('T') === true, RUN_TIMEOUT_MS, 'the client stopped');
        const mark = run.out.stdout.length;
        // Two files in turn (the kernel merges an event equal to the one queued last): one event or
        // more per write, twice the queue's room.
        const writes = 2 * queued;
        for (let i = 0; i < writes; i++) appendFileSync(a.file(`churn${i % 2}.txt`), 'x');
        await writeFile(a.file('missed.txt'), 'after, unseen');
        run.signal('SIGCONT');
        const churn0 = 'x'.repeat(writes / 2);
        await until(async () => (await serverText('churn0.txt')) === churn0, statPassMs, 'the churn its watcher saw, on the server');
        await until(async () => (await serverText('missed.txt')) === 'after, unseen', statPassMs + CONTINUOUS_BOUND_MS, 'the missed change, by the next stat pass');
        await until(async () => run.out.stdout.slice(mark).includes('upload missed.txt'), CONTINUOUS_BOUND_MS, 'the client\'s line for it');
        // The churn went up in a round of its own, before the second pass; the missed file only after it.
        const log = run.out.stdout.slice(mark);
        const [churn, pass, missed] = [log.indexOf('upload churn0.txt'), log.indexOf('stat pass 2:'), log.indexOf('upload missed.txt')];
        assert.ok(churn >= 0 && churn < pass && pass < missed, log);
      } finally {
        await run.stop();
      }
    });
  });
}
