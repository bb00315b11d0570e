import { sql, type RawBuilder } from 'kysely';

/**
 * `column - n`, never below zero: what a give-back of a counter (reserved or staged bytes, a share's
 * download units) writes. A recount may have lowered the counter meanwhile, and a negative figure
 * would let later writes pass a quota or a download limit. Same SQL on SQLite and PostgreSQL.
 */
export function lessFloored(column: string, n: number): RawBuilder<number> {
  const c = sql.ref(column);
  return sql<number>`CASE WHEN ${c} > ${n} THEN ${c} - ${n} ELSE 0 END`;
}
