// Continuous mode does not walk the folder every round: the watcher names the local changes, and a
// full stat pass of the folder runs at the start and then every FILE_CLOUD_SYNC_STAT_PASS_MS (an
// hour by default). The client logs each pass ("stat pass N: …"), which the test counts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
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
    function continuous(d: Device, statPassMs: number): { out: { stdout: string }; passes: () => number; stop: () => Promise<void> } {
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
        stop: async () => {
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
  });
}
