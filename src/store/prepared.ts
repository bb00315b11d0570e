import { createQueryId, type Compilable, type CompiledQuery, type QueryResult } from 'kysely';

/** What a placeholder stands for in the compiled parameters: a value, or one item of a list. */
type Slot = { name: string; index?: number };

const MARK = '\u0000fc-param\u0000';

/**
 * Stand-ins for a query's values while it is built once. `value(name)` and `list(name, n)` return
 * strings that no caller sends; typed as whatever the builder expects, since the compiled query only
 * carries them as bound parameters.
 */
export type Placeholders = {
  value<T>(name: string): T;
  list<T>(name: string, n: number): T[];
};

/** Placeholders for one build, remembering every mark handed out (each must come back as a parameter). */
function placeholders(): Placeholders & { readonly given: Set<string> } {
  const given = new Set<string>();
  const mark = <T>(text: string): T => (given.add(text), text as unknown as T);
  return {
    given,
    value: <T>(name: string) => mark<T>(`${MARK}${name}`),
    list: <T>(name: string, n: number) => Array.from({ length: n }, (_, i) => mark<T>(`${MARK}${name}\u0000${i}`)),
  };
}

const slotOf = (p: unknown): Slot | undefined => {
  if (typeof p !== 'string' || !p.startsWith(MARK)) return undefined;
  const [name, index] = p.slice(MARK.length).split('\u0000') as [string, string | undefined];
  return index === undefined ? { name } : { name, index: Number(index) };
};

/**
 * A query that a hot path runs many times, built and compiled by Kysely once (per shape: the length
 * of its lists) and then run with each call's values. Building and compiling cost more than SQLite's
 * own work for the small indexed statements of an upload (docs/performance.md "Code comments'
 * figures"). The SQL is the builder's, so both
 * dialects stay right; `run` works on the Kysely instance or on a transaction of it.
 */
export function preparedQuery<V extends Record<string, unknown>, O>(build: (p: Placeholders, shape: number) => Compilable<O>) {
  const compiled = new Map<number, { query: CompiledQuery<O>; slots: (Slot | undefined)[] }>();
  const compile = (shape: number) => {
    let c = compiled.get(shape);
    if (!c) {
      const p = placeholders();
      const query = build(p, shape).compile();
      // A value the builder wrote into the SQL text instead of binding it would be lost on every run.
      const bound = new Set(query.parameters);
      const lost = [...p.given].filter((m) => !bound.has(m));
      if (lost.length > 0) throw new Error(`preparedQuery: not bound as parameters: ${lost.map((m) => m.slice(MARK.length)).join(', ')}`);
      c = { query, slots: query.parameters.map(slotOf) };
      compiled.set(shape, c);
    }
    return c;
  };
  /** The query for `values`, ready to run; `shape` chooses the compiled form (the length of its lists, else 0). */
  const bind = (values: V, shape = 0): CompiledQuery<O> => {
    const { query, slots } = compile(shape);
    const parameters = query.parameters.map((p, i) => {
      const slot = slots[i];
      if (!slot) return p;
      const v = values[slot.name];
      if (v === undefined && !(slot.name in values)) throw new Error(`preparedQuery: no value for ${slot.name}`);
      return slot.index === undefined ? v : (v as readonly unknown[])[slot.index];
    });
    return { ...query, parameters, queryId: createQueryId() };
  };
  return {
    bind,
    /** Runs the query for `values` (see bind). */
    async run(on: { executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>> }, values: V, shape = 0): Promise<QueryResult<O>> {
      return on.executeQuery(bind(values, shape));
    },
  };
}
