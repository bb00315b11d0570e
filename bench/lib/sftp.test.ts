import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stopChild } from './processes.js';
import { clientKey, sftpBatch, startSftpCeiling, type SftpCeilingKind, type SftpServer } from './sftp.js';

// The ssh2 ceilings with an index (bench/sftp-ceiling-server.ts --durable --index, and with --pool:
// the disk's work in the thread pool, the index in a thread or on the loop): what OpenSSH's `sftp -b`
// puts lands whole at its name, no staging file stays, and each file's entry, change and folder stamp
// are in the ceiling's index once CLOSE is answered (the session ends after it). A file larger than
// what --pool holds until CLOSE is written as it comes, and lands whole too.
for (const kind of ['index', 'pool', 'pool_loop'] as const satisfies readonly SftpCeilingKind[])
test(`the ssh2 ceiling with an index (${kind}): files put by sftp land whole, and each is in its index with its change`, async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'fc-sftp-ceiling-'));
  let server: SftpServer | undefined;
  try {
    const key = await clientKey(join(tmp, 'key'));
    const root = join(tmp, 'root');
    const client = join(tmp, 'client');
    await mkdir(root, { recursive: true });
    await mkdir(client, { recursive: true });
    for (const n of ['a.bin', 'b.bin']) await writeFile(join(client, n), `bytes of ${n}`);
    // Past the 256 KiB a --pool ceiling holds, in the client's 32 KiB writes.
    const big = Buffer.alloc(600 * 1024, 'x');
    big.write('start', 0);
    big.write('end', big.length - 3);
    await writeFile(join(client, 'c.bin'), big);
    server = await startSftpCeiling(join(tmp, 'ceiling'), root, 'bench', key, kind);
    await sftpBatch(server, key, 'mkdir in\nput a.bin in/\nput b.bin in/\nput c.bin in/\n', client, 60_000);
    assert.equal(await readFile(join(root, 'in', 'a.bin'), 'utf8'), 'bytes of a.bin');
    assert.equal(await readFile(join(root, 'in', 'b.bin'), 'utf8'), 'bytes of b.bin');
    assert.ok((await readFile(join(root, 'in', 'c.bin'))).equals(big), 'the large file whole');
    assert.deepEqual(await readdir(join(root, '.staging')), [], 'no staging file left');
    const db = new Database(join(tmp, 'ceiling', 'index.db'), { readonly: true });
    try {
      const files = db.prepare('SELECT user, path, size FROM entries WHERE is_file = 1 ORDER BY path').all();
      assert.deepEqual(files, [
        { user: 'bench', path: 'in/a.bin', size: 14 },
        { user: 'bench', path: 'in/b.bin', size: 14 },
        { user: 'bench', path: 'in/c.bin', size: big.length },
      ]);
      const changes = db.prepare('SELECT cursor, path FROM changes ORDER BY cursor').all() as { cursor: number; path: string }[];
      assert.deepEqual(changes.map((c) => c.path), ['in/a.bin', 'in/b.bin', 'in/c.bin']);
      assert.equal(db.prepare("SELECT tree_cursor FROM entries WHERE path = 'in'").pluck().get(), changes[2]?.cursor, 'the folder stamped with its last change');
    } finally {
      db.close();
    }
  } finally {
    if (server?.proc) await stopChild(server.proc);
    await rm(tmp, { recursive: true, force: true });
  }
});
