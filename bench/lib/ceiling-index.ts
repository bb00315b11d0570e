import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';

/**
 * The ceilings' `--index` (bench/node-ceiling-server.ts, bench/sftp-ceiling-server.ts; stop 78): the
 * least an index adds to a new file before its answer, in a SQLite file of the ceiling's own (WAL,
 * synchronous=NORMAL, as File Cloud's store). The function commits one file's entry (user, path,
 * name, size, time, etag, a random id: the answer's sync fields), its change-feed row and the stamp
 * of the folder above it (the folder's etag, CONTRACT "Changes") in one transaction, on the caller's
 * thread, and returns the entry's id. The folder is indexed when the first file lands in it.
 */
export function openCeilingIndex(file: string): (user: string, path: string, size: number) => string {
  const commit = openCeilingIndexFiles(file);
  return (user, path, size) => commit([{ user, path, size }])[0] as string;
}

/** A new file for the index: its owner, its path below the owner's root, its size. */
type NewFile = { user: string; path: string; size: number };

/**
 * The same index with a group commit (stop 80): the files that finish in one turn of the event loop
 * are committed together in one transaction at the end of that turn (setImmediate), each answered
 * once it is committed. What issue 53 proposes ("one transaction for the uploads that are waiting"),
 * at its least: how far sharing a commit moves the ceiling with an index.
 */
export function openCeilingIndexGrouped(file: string): (user: string, path: string, size: number) => Promise<string> {
  const commit = openCeilingIndexFiles(file);
  let waiting: { file: NewFile; resolve: (id: string) => void; reject: (e: unknown) => void }[] = [];
  const flush = () => {
    const group = waiting;
    waiting = [];
    try {
      const ids = commit(group.map((w) => w.file));
      group.forEach((w, i) => w.resolve(ids[i] as string));
    } catch (e) {
      for (const w of group) w.reject(e);
    }
  };
  return (user, path, size) =>
    new Promise((resolve, reject) => {
      if (waiting.length === 0) setImmediate(flush);
      waiting.push({ file: { user, path, size }, resolve, reject });
    });
}

/** The index's file and its one transaction for the files given, each file's id returned in order. */
function openCeilingIndexFiles(file: string): (files: readonly NewFile[]) => string[] {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY, user TEXT NOT NULL, path TEXT NOT NULL, name TEXT NOT NULL, is_file INTEGER NOT NULL,
             size INTEGER NOT NULL, modified INTEGER NOT NULL, etag TEXT NOT NULL, file_id TEXT NOT NULL, tree_cursor INTEGER, UNIQUE (user, path));
           CREATE TABLE IF NOT EXISTS changes (cursor INTEGER PRIMARY KEY AUTOINCREMENT, owner TEXT NOT NULL, type TEXT NOT NULL, path TEXT NOT NULL,
             is_file INTEGER NOT NULL, size INTEGER, modified INTEGER, etag TEXT, file_id TEXT, created_at INTEGER NOT NULL);
           CREATE INDEX IF NOT EXISTS changes_owner_cursor ON changes (owner, cursor);`);
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const insert = db.prepare('INSERT INTO entries (user, path, name, is_file, size, modified, etag, file_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (user, path) DO NOTHING');
  const change = db.prepare("INSERT INTO changes (owner, type, path, is_file, size, modified, etag, file_id, created_at) VALUES (?, 'created', ?, ?, ?, ?, ?, ?, ?)");
  const stamp = db.prepare('UPDATE entries SET tree_cursor = ? WHERE user = ? AND path = ?');
  // Folders this process has indexed (committed): a file into one of them asks nothing about it, as little as a ceiling does.
  const indexed = new Set<string>();
  return (files) => {
    const now = Date.now();
    const ids: string[] = [];
    const folders: string[] = [];
    begin.run();
    try {
      for (const { user, path, size } of files) {
        const id = randomBytes(16).toString('hex');
        const etag = `"${now.toString(36)}-${size.toString(36)}"`;
        const folder = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : undefined;
        const key = `${user}\0${folder}`;
        if (folder !== undefined && !indexed.has(key) && !folders.includes(key)) {
          insert.run(user, folder, folder.slice(folder.lastIndexOf('/') + 1), 0, 0, now, '"d"', randomBytes(16).toString('hex'));
          folders.push(key);
        }
        insert.run(user, path, path.slice(path.lastIndexOf('/') + 1), 1, size, now, etag, id);
        const cursor = change.run(user, path, 1, size, now, etag, id, now).lastInsertRowid;
        if (folder !== undefined) stamp.run(cursor, user, folder);
        ids.push(id);
      }
      commit.run();
      for (const key of folders) indexed.add(key);
    } catch (e) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw e;
    }
    return ids;
  };
}

/**
 * The same index in a worker thread of its own (bench/lib/ceiling-index-thread.ts; the ssh2 ceiling's
 * `--pool`): each file a message to the thread and its id back, as File Cloud's upload transaction
 * runs in src/store/sqlite-writer.ts. The thread is unref'd: it keeps no process alive.
 */
export function openCeilingIndexThread(file: string): (user: string, path: string, size: number) => Promise<string> {
  const thread = new Worker(new URL('./ceiling-index-thread.js', import.meta.url), { workerData: { file } });
  thread.unref();
  const waiting = new Map<number, { resolve: (id: string) => void; reject: (e: Error) => void }>();
  let next = 0;
  thread.on('message', (m: { n: number; id?: string; error?: string }) => {
    const w = waiting.get(m.n);
    waiting.delete(m.n);
    if (m.id !== undefined) w?.resolve(m.id);
    else w?.reject(new Error(m.error ?? 'the index thread failed'));
  });
  thread.on('error', (e) => {
    for (const w of waiting.values()) w.reject(e);
    waiting.clear();
  });
  return (user, path, size) =>
    new Promise((resolve, reject) => {
      const n = next++;
      waiting.set(n, { resolve, reject });
      thread.postMessage({ n, user, path, size });
    });
}
