import { PostgresAdapter, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Whether the store is PostgreSQL (where rows inserted at once can commit out of their sequence order). */
export const isPostgres = (db: Kysely<Database>): boolean => db.getExecutor().adapter instanceof PostgresAdapter;
