import { IntlMessageFormat } from 'intl-messageformat';
import { CATALOGS, type MessageKey } from './catalogs.js';
import { translator, type Translate } from './translate.js';

/**
 * The API's precise sentences for a refusal ("The path is invalid: a name cannot contain a
 * backslash."), kept as English catalog messages (`apiDetail.*`, and the pieces they take as
 * arguments, `apiPart.*`). The server writes its sentence from the catalog, so the JSON body
 * stays one English sentence (CONTRACT "Errors") and a reader in another language can have it
 * back word for word in theirs: `localizeSentence` recognizes the English sentence by its
 * catalog message, takes its arguments, and formats the same key in the reader's language.
 */
export type SentenceKey = Extract<MessageKey, `apiDetail.${string}` | `apiPart.${string}`>;

const english = translator('en');

/**
 * The English sentence for `key`. Values are shown as given: a number is passed as text so
 * that a limit reads as the server always wrote it (`10000`, not `10,000`).
 */
export function sentence(key: SentenceKey, values?: Record<string, string | number>): string {
  const text: Record<string, string> = {};
  for (const [k, v] of Object.entries(values ?? {})) text[k] = String(v);
  return english(key, text);
}

type Pattern = { readonly key: SentenceKey; readonly re: RegExp; readonly names: readonly string[]; readonly literal: number };
type Ast = readonly { type: number; value: string }[];

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A message of literal text and plain `{arguments}` as a pattern that takes the arguments back. */
function patternOf(key: SentenceKey): Pattern {
  const ast = new IntlMessageFormat(CATALOGS.en[key], 'en').getAst() as unknown as Ast;
  let source = '';
  let literal = 0;
  const names: string[] = [];
  for (const node of ast) {
    if (node.type === 0) {
      source += escapeRe(node.value);
      literal += node.value.length;
    } else if (node.type === 1) {
      source += '([\\s\\S]+?)';
      names.push(node.value);
    } else {
      // A plural or select could not be read back from its output: such a sentence is refused here.
      throw new Error(`${key}: an API sentence takes plain {arguments} only`);
    }
  }
  return { key, re: new RegExp(`^${source}$`), names, literal };
}

let patterns: { sentences: Pattern[]; parts: Pattern[] } | undefined;

function allPatterns(): { sentences: Pattern[]; parts: Pattern[] } {
  if (patterns) return patterns;
  const keys = Object.keys(CATALOGS.en) as MessageKey[];
  // The most literal text first: of two messages that both fit, the more specific one wins.
  const build = (prefix: string) =>
    keys
      .filter((k): k is SentenceKey => k.startsWith(prefix))
      .map(patternOf)
      .sort((a, b) => b.literal - a.literal);
  patterns = { sentences: build('apiDetail.'), parts: build('apiPart.') };
  return patterns;
}

function match(list: readonly Pattern[], text: string, t: Translate, depth: number): string | undefined {
  for (const p of list) {
    const m = p.re.exec(text);
    if (!m) continue;
    const values: Record<string, string> = {};
    p.names.forEach((name, i) => {
      const value = m[i + 1] ?? '';
      // An argument may itself be a catalog piece (a name's problem, a rule); data stays as it is.
      values[name] = (depth < 2 && match(allPatterns().parts, value, t, depth + 1)) || value;
    });
    return t(p.key, values);
  }
  return undefined;
}

/** The server's English sentence worded by `t`, or undefined when it is no catalog sentence. */
export function localizeSentence(message: string, t: Translate): string | undefined {
  return match(allPatterns().sentences, message, t, 0);
}

/** A piece of a sentence (`apiPart.*`, e.g. why single sign-on cannot be used) worded by `t`, else as it is. */
export function localizePart(text: string, t: Translate): string {
  return match(allPatterns().parts, text, t, 1) ?? text;
}
