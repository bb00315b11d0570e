import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bearer, login, postJson } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';
import { crashRound, faultSeed, filesUnder, prng, restart, selfChecking, verify } from './crash-helpers.js';

/**
 * SIGKILL at random points of a stream of moves and deletes, then a
 * restart: a folder is whole at exactly one place (its last acknowledged
 * one, or the destination of the move in flight), a file is never lost,
 * a folder being deleted is either whole or gone, and data/tmp is empty.
 */

const ROUNDS = 5;
const FOLDER_FILES = 25;

type Disk = Map<string, Buffer>;
/** The files of disk below `folder/`, by name. */
const inFolder = (disk: Disk, folder: string) => new Map([...disk].filter(([p]) => p.startsWith(`${folder}/`)).map(([p, b]) => [p.slice(folder.length + 1), b]));

function sameFiles(a: Map<string, Buffer>, b: Map<string, Buffer>): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k)?.equals(v));
}

async function upload(url: string, token: string, folder: string, files: Map<string, Buffer>): Promise<void> {
  const { body, contentType } = multipartBody([...files].map(([filename, content]) => ({ filename, content })));
  const res = await fetch(`${url}/storage/admin/${folder}/`, { method: 'PUT', headers: { ...bearer(token), 'content-type': contentType }, body });
  assert.equal(res.status, 201);
}

test('SIGKILL at random points of moves: after a restart every file is whole at one of its places, and staging is clean', async (t) => {
  const seed = faultSeed();
  t.diagnostic(`FC_FAULT_SEED=${seed}`);
  const rand = prng(seed);
  const dataDir = await mkdtemp(join(tmpdir(), 'fc-kill-mv-'));
  const album = new Map(Array.from({ length: FOLDER_FILES }, (_, i) => [`photo-${i}.jpg`, selfChecking(2000 + i * 100)]));
  const single = selfChecking(100_000);
  const places = ['m/A', 'm/B', 'm/deep/er/C'];
  const filePlaces = ['m/x.bin', 'm/sub/y.bin'];
  let at = places[0] as string;
  let fileAt = filePlaces[0] as string;
  try {
    const setup = await restart(dataDir);
    const { access_token } = await login(setup.url, 'admin', setup.adminPassword);
    await upload(setup.url, access_token, at, album);
    assert.equal((await fetch(`${setup.url}/storage/admin/${fileAt}`, { method: 'PUT', headers: bearer(access_token), body: single })).status, 201);
    await setup.stop();
    for (let round = 0; round < ROUNDS; round++) {
      let next: { folder?: string; file?: string } = {};
      await crashRound(dataDir, 200 + Math.floor(rand() * 1000), async (url, token) => {
        for (;;) {
          if (rand() < 0.6) {
            const to = places.filter((p) => p !== at)[Math.floor(rand() * 2)] as string;
            const overwrite = rand() < 0.5;
            // A decoy folder at the destination, replaced whole by an overwriting move.
            if (overwrite) await upload(url, token, to, new Map([['decoy.txt', selfChecking(10)]]));
            next = { folder: to };
            const res = await postJson(`${url}/storage/admin/${at}`, { action: 'Move', new_path: `/admin/${to}`, overwrite }, bearer(token));
            assert.equal(res.status, 204);
            at = to;
            // Without overwrite, the next move must find its destination free: drop the decoys.
            for (const p of places) if (p !== at) await fetch(`${url}/storage/admin/${p}`, { method: 'DELETE', headers: bearer(token) });
          } else {
            const to = filePlaces.find((p) => p !== fileAt) as string;
            next = { file: to };
            assert.equal((await postJson(`${url}/storage/admin/${fileAt}`, { action: 'Move', new_path: `/admin/${to}` }, bearer(token))).status, 204);
            fileAt = to;
          }
          next = {};
        }
      });

      const server = await restart(dataDir);
      try {
        assert.deepEqual(await readdir(join(dataDir, 'tmp')), [], `round ${round}: staging cleared`);
        const disk = await filesUnder(join(dataDir, 'storage', 'admin'));
        for (const [p, b] of disk) assert.ok(verify(b), `round ${round}: ${p} is whole`);
        const holding = places.filter((p) => sameFiles(inFolder(disk, p), album));
        assert.equal(holding.length, 1, `round ${round}: the album is whole at exactly one place (${holding}); on disk: ${[...disk.keys()].join(' ')}`);
        assert.ok(holding[0] === at || holding[0] === next.folder, `round ${round}: at ${holding[0]}, acknowledged ${at}, in flight ${next.folder}`);
        at = holding[0] as string;
        const fileHolders = filePlaces.filter((p) => disk.get(p)?.equals(single));
        assert.ok(fileHolders.length >= 1, `round ${round}: the moved file is not lost`);
        assert.ok(fileHolders.every((p) => p === fileAt || p === next.file), `round ${round}: the file is where it was or where it was going`);
        fileAt = fileHolders.includes(fileAt) ? fileAt : (fileHolders[0] as string);
        // A kill between link and unlink may leave the file at both places: keep one, as a user would.
        if (fileHolders.length === 2) await rm(join(dataDir, 'storage', 'admin', filePlaces.find((p) => p !== fileAt) as string));
        for (const p of places) if (p !== at) await rm(join(dataDir, 'storage', 'admin', p), { recursive: true, force: true });
      } finally {
        await server.stop();
      }
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('SIGKILL at random points of deletes: after a restart a folder is whole or gone, nothing else is touched, and staging is clean', async (t) => {
  const seed = faultSeed() + 1;
  t.diagnostic(`FC_FAULT_SEED=${seed - 1}`);
  const rand = prng(seed);
  const dataDir = await mkdtemp(join(tmpdir(), 'fc-kill-rm-'));
  const keep = new Map([['k1.bin', selfChecking(5000)], ['k2.bin', selfChecking(70_000)]]);
  /** Folders the server acknowledged creating and not yet deleting, by name. */
  const live = new Map<string, Map<string, Buffer>>();
  const deleted = new Set<string>();
  try {
    // The untouched files go up before any kill: inside a round, a kill could land before their answer.
    const setup = await restart(dataDir);
    try {
      const { access_token } = await login(setup.url, 'admin', setup.adminPassword);
      await upload(setup.url, access_token, 'keep', keep);
    } finally {
      await setup.stop();
    }
    for (let round = 0; round < ROUNDS; round++) {
      let deleting: string | undefined;
      let uploading: [string, Map<string, Buffer>] | undefined;
      await crashRound(dataDir, 200 + Math.floor(rand() * 1000), async (url, token) => {
        for (let i = 0; ; i++) {
          const name = `d/r${round}-${i}`;
          const files = new Map(Array.from({ length: 1 + Math.floor(rand() * 40) }, (_, k) => [`f${k}.bin`, selfChecking(500 + k)]));
          uploading = [name, files];
          await upload(url, token, name, files);
          uploading = undefined;
          live.set(name, files);
          deleting = name;
          assert.equal((await fetch(`${url}/storage/admin/${name}/`, { method: 'DELETE', headers: bearer(token) })).status, 204);
          live.delete(name);
          deleted.add(name);
          deleting = undefined;
        }
      });

      const server = await restart(dataDir);
      try {
        assert.deepEqual(await readdir(join(dataDir, 'tmp')), [], `round ${round}: staging cleared`);
        const disk = await filesUnder(join(dataDir, 'storage', 'admin'));
        for (const [p, b] of disk) assert.ok(verify(b), `round ${round}: ${p} is whole`);
        assert.ok(sameFiles(inFolder(disk, 'keep'), keep), `round ${round}: untouched files are intact (keep/ holds ${[...inFolder(disk, 'keep').keys()].join(' ') || 'nothing'})`);
        for (const name of deleted) assert.equal(inFolder(disk, name).size, 0, `round ${round}: acknowledged delete of ${name} stays done`);
        for (const [name, files] of live) {
          const now = inFolder(disk, name);
          if (name === deleting && now.size === 0) {
            live.delete(name);
            continue;
          }
          assert.ok(sameFiles(now, files), `round ${round}: ${name} is whole (${now.size}/${files.size} files)${name === deleting ? ' or gone' : ''}`);
        }
        // A multipart upload cut short keeps the parts it committed, each whole.
        if (uploading) {
          const [name, files] = uploading;
          for (const [f, b] of inFolder(disk, name)) assert.ok(files.get(f)?.equals(b), `round ${round}: ${name}/${f} is one of the parts sent`);
        }
        const known = new Set(['keep', ...live.keys(), ...(uploading ? [uploading[0]] : [])]);
        for (const p of disk.keys()) assert.ok([...known].some((k) => p.startsWith(`${k}/`)), `round ${round}: unexpected ${p}`);
        if (uploading) await rm(join(dataDir, 'storage', 'admin', uploading[0]), { recursive: true, force: true });
      } finally {
        await server.stop();
      }
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
