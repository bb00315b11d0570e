import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { TotpRepo } from './totp.js';

export function createTotpRepo(db: Kysely<Database>): TotpRepo {
  return {
    async get(userId) {
      const r = await db.selectFrom('users').select(['totp_secret', 'totp_pending', 'totp_last_step']).where('id', '=', userId).executeTakeFirst();
      if (!r) return undefined;
      return { secret: r.totp_secret ?? null, pending: r.totp_pending ?? null, lastStep: r.totp_last_step == null ? null : Number(r.totp_last_step) };
    },

    async setPending(userId, secret) {
      const r = await db.updateTable('users').set({ totp_pending: secret }).where('id', '=', userId).where('totp_secret', 'is', null).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    async enable(userId, secret, step, recoveryHashes) {
      return db.transaction().execute(async (trx) => {
        const r = await trx
          .updateTable('users')
          .set({ totp_secret: secret, totp_pending: null, totp_last_step: step })
          .where('id', '=', userId)
          .where('totp_pending', '=', secret)
          .where('totp_secret', 'is', null)
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) === 0) return false;
        await trx.deleteFrom('totp_recovery_codes').where('user_id', '=', userId).execute();
        if (recoveryHashes.length > 0) await trx.insertInto('totp_recovery_codes').values(recoveryHashes.map((h) => ({ user_id: userId, code_hash: h }))).execute();
        return true;
      });
    },

    async claimStep(userId, step) {
      const r = await db
        .updateTable('users')
        .set({ totp_last_step: step })
        .where('id', '=', userId)
        .where('totp_secret', 'is not', null)
        .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    async useRecoveryCode(userId, codeHash) {
      const r = await db.deleteFrom('totp_recovery_codes').where('user_id', '=', userId).where('code_hash', '=', codeHash).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    async recoveryCodesLeft(userId) {
      const r = await db.selectFrom('totp_recovery_codes').select((eb) => eb.fn.countAll<number | string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
      return Number(r.n);
    },

    async disable(userId) {
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('users').set({ totp_secret: null, totp_pending: null, totp_last_step: null }).where('id', '=', userId).execute();
        await trx.deleteFrom('totp_recovery_codes').where('user_id', '=', userId).execute();
      });
    },
  };
}
