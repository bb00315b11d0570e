/**
 * The WebDAV `If` request header (RFC 4918 §10.4): lists of conditions on
 * lock tokens and entity tags, optionally tagged with the resource they
 * apply to. The header is true when any list is true; a list is true when
 * all its conditions are. Lock tokens named in it (not negated) are the
 * tokens the client submits for the lock check.
 */
export class IfHeaderError extends Error {}

export type IfCondition = {
  readonly not: boolean;
  readonly kind: 'token' | 'etag';
  /** A state token without its angle brackets, or an entity tag as written (quotes and any W/ included). */
  readonly value: string;
};

export type IfList = { readonly resource?: string; readonly conditions: readonly IfCondition[] };
export type IfHeader = { readonly lists: readonly IfList[] };

export type ResourceState = { readonly etag?: string; readonly lockTokens: readonly string[] };

export const MAX_IF_LENGTH = 8192;
export const MAX_IF_ITEMS = 100;

export function parseIfHeader(raw: string): IfHeader {
  if (raw.length > MAX_IF_LENGTH) throw new IfHeaderError(`it is longer than ${MAX_IF_LENGTH} characters`);
  let i = 0;
  const skipSpace = () => {
    while (i < raw.length && (raw[i] === ' ' || raw[i] === '\t')) i++;
  };
  const until = (close: string, what: string) => {
    const end = raw.indexOf(close, i + 1);
    if (end < 0) throw new IfHeaderError(`an unclosed ${what}`);
    const value = raw.slice(i + 1, end).trim();
    if (value === '') throw new IfHeaderError(`an empty ${what}`);
    i = end + 1;
    return value;
  };
  const lists: IfList[] = [];
  let items = 0;
  let tagged: boolean | undefined;
  let resource: string | undefined;
  skipSpace();
  if (i >= raw.length) throw new IfHeaderError('it is empty');
  while (i < raw.length) {
    const c = raw[i];
    if (c === '<') {
      if (tagged === false) throw new IfHeaderError('it mixes tagged and untagged lists');
      tagged = true;
      resource = until('>', 'resource tag');
      skipSpace();
      if (raw[i] !== '(') throw new IfHeaderError('a resource tag must be followed by a list');
      continue;
    }
    if (c !== '(') throw new IfHeaderError(`unexpected "${c}" at ${i}`);
    if (tagged === undefined) tagged = false;
    i++;
    const conditions: IfCondition[] = [];
    for (;;) {
      skipSpace();
      if (raw[i] === ')') {
        i++;
        break;
      }
      if (i >= raw.length) throw new IfHeaderError('an unclosed list');
      let not = false;
      if (raw.slice(i, i + 3).toLowerCase() === 'not') {
        not = true;
        i += 3;
        skipSpace();
      }
      if (raw[i] === '<') conditions.push({ not, kind: 'token', value: until('>', 'state token') });
      else if (raw[i] === '[') conditions.push({ not, kind: 'etag', value: until(']', 'entity tag') });
      else throw new IfHeaderError(`a condition must be a <state-token> or an [entity-tag], at ${i}`);
      if (++items > MAX_IF_ITEMS) throw new IfHeaderError(`it has more than ${MAX_IF_ITEMS} conditions`);
    }
    if (conditions.length === 0) throw new IfHeaderError('an empty list');
    lists.push(tagged ? { resource, conditions } : { conditions });
    skipSpace();
  }
  return { lists };
}

/** The lock tokens a client submits: every state token not under `Not`, once each, in order. */
export function submittedTokens(h: IfHeader): string[] {
  const seen = new Set<string>();
  for (const l of h.lists) for (const c of l.conditions) if (c.kind === 'token' && !c.not) seen.add(c.value);
  return [...seen];
}

/**
 * Whether the header holds. `resolve` gives the state of a list's resource
 * (undefined = the request's own resource); a resource it cannot give (none
 * there, or not the client's) matches no token or entity tag. Entity tags
 * compare strongly, so a weak tag never matches.
 */
export function evaluateIf(h: IfHeader, resolve: (resource: string | undefined) => ResourceState | undefined): boolean {
  return h.lists.some((list) => {
    const state = resolve(list.resource);
    return list.conditions.every((c) => {
      const match = state !== undefined && (c.kind === 'token' ? state.lockTokens.includes(c.value) : !c.value.startsWith('W/') && c.value === state.etag);
      return c.not ? !match : match;
    });
  });
}
