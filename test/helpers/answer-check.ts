import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Answer } from '../../src/app/route-table.js';
import { credentialAnswers } from '../../src/http/openapi.js';
import { ANY_ROUTE, type JsonSchema, type ResponseSpec } from '../../src/http/schemas.js';

/**
 * Checks every answer of a test app against its route's schema: the status is
 * documented (by the route or as an answer of any route, ANY_ROUTE; 5xx aside: a backend may fail inside any route), a body is there only
 * when the schema gives it a media type, and a JSON body validates against the
 * documented JSON Schema. Route tests then keep the schemas, and so
 * GET /api/openapi.json, true to what the server answers.
 */
export function answerChecker(): { check: (answer: Answer) => void; problems: string[] } {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const compiled = new WeakMap<object, ValidateFunction>();
  const validator = (schema: JsonSchema) => {
    let v = compiled.get(schema);
    if (!v) compiled.set(schema, (v = ajv.compile(schema as object)));
    return v;
  };
  const problems: string[] = [];
  const check = (a: Answer) => {
    const schema = a.route.schema;
    if (!schema) return; // the completeness test reports it
    const label = `${a.method} ${a.route.url} answered ${a.status}`;
    const responses = schema.response ?? {};
    const spec = (responses[String(a.status)] ?? responses[`${String(a.status)[0]}XX`] ?? responses.default ?? credentialAnswers(a.route, a.method)[String(a.status)] ?? ANY_ROUTE[String(a.status)]) as ResponseSpec | undefined;
    if (!spec) {
      if (a.status < 500) problems.push(`${label}, which its schema.response does not document`);
      return;
    }
    if (a.method === 'HEAD' || a.text === undefined || a.text === '') return;
    const media = (a.contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    const content = spec.content;
    if (!content) return void problems.push(`${label} with a ${media || 'untyped'} body, but its schema documents no body`);
    const key = Object.keys(content).find((k) => k === media) ?? Object.keys(content).find((k) => k === `${media.split('/')[0]}/*`) ?? Object.keys(content).find((k) => k === '*/*');
    if (!key) return void problems.push(`${label} with ${media}, but its schema documents ${Object.keys(content).join(', ')}`);
    if (media !== 'application/json') return;
    let body: unknown;
    try {
      body = JSON.parse(a.text);
    } catch {
      return void problems.push(`${label} with a body that is not JSON`);
    }
    const validate = validator(content[key]!.schema);
    if (!validate(body)) problems.push(`${label}: the body does not match its schema: ${ajv.errorsText(validate.errors)} in ${a.text.slice(0, 200)}`);
  };
  return { check, problems };
}
