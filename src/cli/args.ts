import { parseArgs } from 'node:util';
import { UsageError } from '../config/load.js';
import { OPTIONS, type OptionScope } from '../config/options.js';

export type ExtraOption = { readonly flag: string; readonly type: 'string' | 'boolean'; readonly description: string; readonly value?: string };

export type ParsedArgs = {
  /** Values keyed by option key (config options) or by flag name without dashes (extra options). */
  readonly values: Record<string, string | boolean | undefined>;
  readonly positionals: string[];
};

/**
 * The command words of argv (`serve`, `user add alice`…), found by a lenient
 * pass that knows which options take a value, so `user --data-dir d list`
 * is not mistaken for the command `user d`.
 */
export function commandWords(argv: readonly string[], extra: readonly ExtraOption[]): string[] {
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const spec of Object.values(OPTIONS)) options[spec.flag.slice(2)] = { type: spec.type };
  for (const o of extra) options[o.flag.slice(2)] = { type: o.type };
  return parseArgs({ args: [...argv], options, allowPositionals: true, strict: false }).positionals;
}

/**
 * Parses argv for one command: the config options of `scopes` plus the
 * command's own `extra` options, anywhere among the command words (so
 * `--data-dir` works before or after them). Unknown options → UsageError.
 */
export function parseCommandArgs(argv: readonly string[], scopes: readonly OptionScope[], extra: readonly ExtraOption[]): ParsedArgs {
  const options: Record<string, { type: 'string' | 'boolean' }> = { help: { type: 'boolean' } };
  const flagToKey = new Map<string, string>();
  for (const spec of Object.values(OPTIONS)) {
    if (!scopes.includes(spec.scope)) continue;
    const name = spec.flag.slice(2);
    options[name] = { type: spec.type };
    flagToKey.set(name, spec.key);
  }
  for (const o of extra) options[o.flag.slice(2)] = { type: o.type };
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(simplify((e as Error).message));
  }
  const values: Record<string, string | boolean | undefined> = {};
  for (const [name, v] of Object.entries(parsed.values)) {
    values[flagToKey.get(name) ?? name] = Array.isArray(v) ? v[v.length - 1] : v;
  }
  return { values, positionals: parsed.positionals };
}

// node:util's messages mention internals ("To specify a positional argument starting with a '-'…"): keep the first sentence.
function simplify(message: string): string {
  return message.split('. ')[0]!.replace(/^Unknown option/, 'unknown option').replace(/^Option/, 'option');
}
