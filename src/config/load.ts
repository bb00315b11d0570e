import { OPTIONS, OptionValueError, type Config, type OptionKey, type OptionScope } from './options.js';

export class UsageError extends Error {}

/**
 * Resolves every option in `scopes` from (highest first) a parsed flag
 * value, the environment, the default. A bad value is a UsageError naming
 * the flag or variable, so the CLI can print one line and exit 2.
 */
export function loadConfig(
  flags: Readonly<Record<string, string | boolean | undefined>>,
  env: Readonly<Record<string, string | undefined>>,
  scopes: readonly OptionScope[] = ['global', 'serve'],
): Config {
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(OPTIONS) as [OptionKey, (typeof OPTIONS)[OptionKey]][]) {
    if (!scopes.includes(spec.scope)) {
      out[key] = spec.default;
      continue;
    }
    const flagValue = flags[key];
    const envValue = env[spec.env];
    try {
      if (flagValue !== undefined) {
        out[key] = typeof flagValue === 'boolean' ? flagValue : spec.parse(flagValue);
      } else if (envValue !== undefined && envValue !== '') {
        out[key] = spec.parse(envValue);
      } else {
        out[key] = spec.default;
      }
    } catch (e) {
      if (!(e instanceof OptionValueError)) throw e;
      const source = flagValue !== undefined ? spec.flag : spec.env;
      throw new UsageError(`invalid value for ${source}: ${e.message}`);
    }
  }
  return Object.freeze(out) as Config;
}

/** The configuration as it may be logged: secrets replaced, Infinity spelled out. */
export function redactedConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(OPTIONS) as [OptionKey, (typeof OPTIONS)[OptionKey]][]) {
    const v = config[key];
    out[key] = 'secret' in spec && spec.secret ? (v ? '[redacted]' : '[unset]') : v === Infinity ? 'unlimited' : v;
  }
  return out;
}

/** The process environment: the only place the program reads it. */
export function processEnv(): Readonly<Record<string, string | undefined>> {
  return process.env;
}
