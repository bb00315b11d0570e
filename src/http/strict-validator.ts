import { Ajv } from 'ajv';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';

/**
 * A route-schema validator that does not coerce JSON bodies. Fastify's default Ajv coerces
 * types (`["pw"]` becomes `"pw"`, `1` becomes `true`), so a field of the wrong type would be
 * accepted; the contract wants 400. Query strings and path parameters are text by nature
 * and keep coercion (`?delete_files=true` is a boolean).
 */
const strict = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: false, strict: false });
const coercing = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: false, strict: false });

/** Like Fastify's own compiler: Ajv's validate function, whose `errors` Fastify turns into FST_ERR_VALIDATION (400). */
export const strictBodyValidator: FastifySchemaCompiler<FastifySchema> = ({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema as object);
