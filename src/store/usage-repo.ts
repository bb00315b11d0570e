import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { lessFloored } from './counter-sql.js';
import { preparedQuery } from './prepared.js';
import type { Ride } from './steps.js';
import type { UsageRepo } from './usage.js';

/** What one unfinished tus upload (row alias `t`) holds: its length, or its offset while the length is deferred. */
const HELD = sql`COALESCE(t.upload_length, t.upload_offset)`;

/**
 * Usage and quotas on the users row. Each change is a single UPDATE whose
 * arithmetic runs in the database: SQLite serializes writers, and
 * PostgreSQL re-evaluates the WHERE of a row it had to wait for (READ
 * COMMITTED), so the conditional reserve cannot let two uploads both take
 * the last free bytes.
 */
export function createUsageRepo(db: Kysely<Database>, ride?: Ride): UsageRepo {
  // Every upload and delete runs it: compiled once (prepared.ts).
  const add = preparedQuery((p) => db.updateTable('users').set({ used_bytes: sql`used_bytes + ${p.value<number>('delta')}` }).where('username', '=', p.value<string>('username')));
  // Every upload reads the owner's quota first (whether to meter it): compiled once too.
  const read = preparedQuery((p) => db.selectFrom('users').select(['used_bytes', 'reserved_bytes', 'staged_bytes', 'quota']).where('username', '=', p.value<string>('username')));
  return {
    async get(username) {
      const r = (await read.run(db, { username })).rows[0];
      if (!r) return undefined;
      return { used: Number(r.used_bytes), reserved: Number(r.reserved_bytes), staged: Number(r.staged_bytes), quota: r.quota === null ? undefined : Number(r.quota) };
    },

    async add(username, delta) {
      if (delta === 0) return;
      // SQLite: in the same commit as the upload's index entries when they come in the same turn.
      if (ride) await ride(add.bind({ username, delta }));
      else await add.run(db, { username, delta });
    },

    async setUsed(username, used) {
      const r = await db
        .updateTable('users')
        .set({ used_bytes: used, reserved_bytes: 0, staged_bytes: sql`COALESCE((SELECT SUM(${HELD}) FROM tus_uploads t WHERE t.user_name = users.username AND t.final_path IS NULL), 0)` })
        .where('username', '=', username)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    async reserve(username, bytes) {
      const r = await db
        .updateTable('users')
        .set({ reserved_bytes: sql`reserved_bytes + ${bytes}` })
        .where('username', '=', username)
        .where('quota', 'is not', null)
        .where(sql<boolean>`used_bytes + reserved_bytes + staged_bytes + ${bytes} <= quota`)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) > 0) return 'reserved';
      const row = await db.selectFrom('users').select('quota').where('username', '=', username).executeTakeFirst();
      return row && row.quota === null ? 'unlimited' : 'refused';
    },

    async release(username, bytes) {
      if (bytes === 0) return;
      await db
        .updateTable('users')
        // Never below zero: a recount (setUsed) may have cleared the reservation meanwhile.
        .set({ reserved_bytes: lessFloored('reserved_bytes', bytes) })
        .where('username', '=', username)
        .execute();
    },

    async setQuota(username, quota) {
      const r = await db.updateTable('users').set({ quota }).where('username', '=', username).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
  };
}
