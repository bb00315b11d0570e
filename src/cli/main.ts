import { readFileSync } from 'node:fs';
import { UsageError, loadConfig, processEnv } from '../config/load.js';
import type { Config } from '../config/options.js';
import { isAppError } from '../domain/errors.js';
import { commandWords, parseCommandArgs, type ExtraOption } from './args.js';
import { MAIN_HELP, commandHelp } from './help.js';
import { runServe } from './serve.js';
import { oidcProblem } from '../config/oidc.js';
import { INDEX_SUMMARY, runIndex } from './index-command.js';
import { runUserCommand, USER_COMMANDS } from './user.js';
import { AUDIT_VERIFY_SUMMARY, runAuditVerify } from './audit-command.js';
import { GROUP_COMMANDS, groupHelp, runGroupCommand } from './group.js';
import { ENCRYPTION_COMMANDS, NEW_KEY_OPTION, runEncryptionCommand } from './encryption-command.js';

/** Exit codes of CONTRACT "Command line". */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** Entry point of bin/file-cloud.js. Sets process.exitCode; serve keeps running until a signal. */
export async function main(argv: readonly string[]): Promise<void> {
  const debug = argv.includes('--debug') || /^(1|true|yes|on)$/i.test(processEnv().FILE_CLOUD_DEBUG ?? '');
  try {
    process.exitCode = await dispatch(argv);
  } catch (e) {
    process.exitCode = report(e, debug);
  }
}

async function dispatch(argv: readonly string[]): Promise<number> {
  // The sync client is its own package (it needs none of the server's modules): same code, same flags.
  if (argv[0] === 'sync') return (await import('../../packages/sync/src/cli.js')).runSyncCommand(argv.slice(1));
  const words = commandWords(argv, Object.values(USER_COMMANDS).flatMap((c) => c.options));
  const command = words[0];
  if (command === undefined) {
    if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) return print(MAIN_HELP);
    if (argv.includes('--version')) return print(version());
    throw new UsageError('no command given (try --help)');
  }
  if (command === 'serve') {
    const args = parseCommandArgs(argv, ['global', 'serve'], []);
    if (args.values.help) return print(commandHelp('file-cloud serve [options]', 'Runs the server. On a data directory without users it creates "admin" and prints its password once.', ['global', 'serve']));
    expectWords(args.positionals, ['serve']);
    const serveConfig = config(args.values, ['global', 'serve']);
    const sso = oidcProblem(serveConfig);
    if (sso) throw new UsageError(sso);
    return runServe(serveConfig);
  }
  if (command === 'index') {
    const args = parseCommandArgs(argv, ['global'], []);
    if (args.values.help) return print(commandHelp('file-cloud index', INDEX_SUMMARY, ['global']));
    expectWords(args.positionals, ['index']);
    return runIndex(config(args.values, ['global']));
  }
  if (command === 'audit') {
    const args = parseCommandArgs(argv, ['global'], []);
    if (args.values.help) return print(commandHelp('file-cloud audit verify', AUDIT_VERIFY_SUMMARY, ['global']));
    expectWords(args.positionals, ['audit', 'verify']);
    return runAuditVerify(config(args.values, ['global']));
  }
  if (command === 'group') {
    const sub = words[1];
    const spec = sub !== undefined && Object.hasOwn(GROUP_COMMANDS, sub) ? GROUP_COMMANDS[sub as keyof typeof GROUP_COMMANDS] : undefined;
    if (!spec) {
      if (argv.includes('--help')) return print(groupHelp());
      throw new UsageError(sub ? `unknown group command "${sub}" (try: file-cloud group --help)` : 'group needs a command: add, remove, member or list');
    }
    const args = parseCommandArgs(argv, ['global'], []);
    if (args.values.help) return print(commandHelp(`file-cloud ${spec.usage}`, spec.summary, ['global']));
    const rest = args.positionals.slice(2);
    if (rest.length !== spec.arity) throw new UsageError(`usage: file-cloud ${spec.usage}`);
    return runGroupCommand(sub as keyof typeof GROUP_COMMANDS, rest, config(args.values, ['global']));
  }
  if (command === 'encryption') {
    const sub = words[1];
    const spec = sub !== undefined && Object.hasOwn(ENCRYPTION_COMMANDS, sub) ? ENCRYPTION_COMMANDS[sub as keyof typeof ENCRYPTION_COMMANDS] : undefined;
    if (!spec) throw new UsageError(sub ? `unknown encryption command "${sub}"` : 'encryption needs a command: keygen, migrate or rotate');
    const extra = sub === 'rotate' ? [NEW_KEY_OPTION] : [];
    const args = parseCommandArgs(argv, ['global'], extra);
    if (args.values.help) return print(commandHelp(`file-cloud ${spec.usage}`, spec.summary, ['global'], extra));
    const rest = args.positionals.slice(2);
    if (rest.length !== spec.arity) throw new UsageError(`usage: file-cloud ${spec.usage}`);
    const newKeyFile = args.values['new-key-file'];
    return runEncryptionCommand(sub as keyof typeof ENCRYPTION_COMMANDS, rest, () => config(args.values, ['global']), typeof newKeyFile === 'string' ? newKeyFile : undefined);
  }
  if (command !== 'user') throw new UsageError(`unknown command "${command}" (try --help)`);
  const sub = words[1];
  const spec = sub !== undefined && Object.hasOwn(USER_COMMANDS, sub) ? USER_COMMANDS[sub as keyof typeof USER_COMMANDS] : undefined;
  if (!spec) {
    if (argv.includes('--help')) return print(userHelp());
    throw new UsageError(sub ? `unknown user command "${sub}" (try: file-cloud user --help)` : 'user needs a command: add, remove, passwd, admin, local, sso, list or quota');
  }
  const args = parseCommandArgs(argv, ['global'], spec.options);
  if (args.values.help) return print(commandHelp(`file-cloud ${spec.usage}`, spec.summary, ['global'], spec.options));
  const rest = args.positionals.slice(2);
  if (rest.length !== spec.arity) throw new UsageError(`usage: file-cloud ${spec.usage}`);
  return runUserCommand(sub as keyof typeof USER_COMMANDS, rest, args.values, config(args.values, ['global']));
}

function config(values: Record<string, string | boolean | undefined>, scopes: readonly ('global' | 'serve')[]): Config {
  return loadConfig(values, processEnv(), scopes);
}

function expectWords(positionals: string[], expected: string[]): void {
  if (positionals.join(' ') !== expected.join(' ')) throw new UsageError(`unexpected argument "${positionals.find((p, i) => p !== expected[i])}"`);
}

function userHelp(): string {
  const width = Math.max(...Object.values(USER_COMMANDS).map((c) => c.usage.length)) + 2;
  const lines = Object.values(USER_COMMANDS).map((c) => `  file-cloud ${c.usage.padEnd(width)}${c.summary}`);
  return ['Usage:', ...lines, '', 'Add --help after a command for its options.', ''].join('\n');
}

function print(text: string): number {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  return EXIT.ok;
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

function report(e: unknown, debug: boolean): number {
  if (e instanceof UsageError) {
    process.stderr.write(`file-cloud: ${e.message}\n`);
    return EXIT.usage;
  }
  const message = isAppError(e) ? e.message : e instanceof Error ? e.message : String(e);
  process.stderr.write(`file-cloud: ${message}\n`);
  if (debug && e instanceof Error && e.stack) process.stderr.write(`${e.stack}\n`);
  return EXIT.failure;
}

export type { ExtraOption };
