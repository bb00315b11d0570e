import type { Kysely, Selectable } from 'kysely';
import type { Database } from './schema.js';
import type { AuditHead, AuditRepo, AuditRow } from './audit.js';

type Row = Selectable<Database['audit_events']>;

const toRow = (r: Row): AuditRow => ({
  seq: Number(r.seq),
  at: Number(r.at),
  type: r.type,
  actor: r.actor,
  address: r.address,
  userAgent: r.user_agent,
  target: r.target,
  outcome: r.outcome,
  detail: r.detail,
  prevHash: r.prev_hash,
  hash: r.hash,
});

async function readHead(db: Kysely<Database>): Promise<AuditHead> {
  const h = await db.selectFrom('audit_head').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  return { seq: Number(h.seq), hash: h.hash, anchorSeq: Number(h.anchor_seq), anchorHash: h.anchor_hash };
}

/**
 * The audit log's hash chain. Appends and purges begin with a write to the one head row: on
 * PostgreSQL that row lock queues every node's appends (READ COMMITTED: the next one reads the
 * head its predecessor committed); on SQLite the write takes the database's write lock first
 * thing, so no reader is ever upgraded mid-transaction.
 */
export function createAuditRepo(db: Kysely<Database>): AuditRepo {
  return {
    async append(draft, hashOf) {
      return db.transaction().execute(async (trx) => {
        await trx.updateTable('audit_head').set({ id: 1 }).where('id', '=', 1).execute();
        const head = await readHead(trx);
        const entry = { ...draft, seq: head.seq + 1, prevHash: head.hash };
        const hash = hashOf(entry);
        await trx
          .insertInto('audit_events')
          .values({
            seq: entry.seq,
            at: entry.at,
            type: entry.type,
            actor: entry.actor,
            address: entry.address,
            user_agent: entry.userAgent,
            target: entry.target,
            outcome: entry.outcome,
            detail: entry.detail,
            prev_hash: entry.prevHash,
            hash,
          })
          .execute();
        await trx.updateTable('audit_head').set({ seq: entry.seq, hash }).where('id', '=', 1).execute();
        return { ...entry, hash };
      });
    },

    async list(f) {
      let q = db.selectFrom('audit_events').selectAll();
      if (f.since !== undefined) q = q.where('at', '>=', f.since);
      if (f.until !== undefined) q = q.where('at', '<', f.until);
      if (f.actor !== undefined) q = q.where('actor', '=', f.actor);
      if (f.type !== undefined) q = f.type.endsWith('.*') ? q.where('type', 'like', `${f.type.slice(0, -1)}%`) : q.where('type', '=', f.type);
      if (f.beforeSeq !== undefined) q = q.where('seq', '<', f.beforeSeq);
      return (await q.orderBy('seq', 'desc').limit(f.limit).execute()).map(toRow);
    },

    async after(afterSeq, limit) {
      return (await db.selectFrom('audit_events').selectAll().where('seq', '>', afterSeq).orderBy('seq', 'asc').limit(limit).execute()).map(toRow);
    },

    head: () => readHead(db),

    async purgeBefore(before) {
      return db.transaction().execute(async (trx) => {
        await trx.updateTable('audit_head').set({ id: 1 }).where('id', '=', 1).execute();
        // The chain is cut at the first entry that is young enough, so what is kept is one unbroken
        // run from the anchor (clocks of nodes may differ a little: an older-stamped later entry stays).
        const keep = await trx.selectFrom('audit_events').select('seq').where('at', '>=', before).orderBy('seq', 'asc').limit(1).executeTakeFirst();
        const head = await readHead(trx);
        const last = keep ? Number(keep.seq) - 1 : head.seq;
        if (last <= head.anchorSeq) return 0;
        const cut = await trx.selectFrom('audit_events').select(['seq', 'hash']).where('seq', '<=', last).orderBy('seq', 'desc').limit(1).executeTakeFirst();
        if (!cut) return 0;
        const r = await trx.deleteFrom('audit_events').where('seq', '<=', Number(cut.seq)).executeTakeFirst();
        await trx.updateTable('audit_head').set({ anchor_seq: Number(cut.seq), anchor_hash: cut.hash }).where('id', '=', 1).execute();
        return Number(r.numDeletedRows);
      });
    },
  };
}
