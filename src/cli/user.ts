import { UsageError } from '../config/load.js';
import type { Config } from '../config/options.js';
import { openCommandServices } from './command-services.js';
import { formatSize, parseQuota } from '../domain/sizes.js';
import type { ExtraOption } from './args.js';
import { passwordFromStdin, passwordFromTerminal } from './password-input.js';
import { cliAudit } from './cli-audit.js';

const PASSWORD_OPTIONS: ExtraOption[] = [
  { flag: '--password', type: 'string', value: 'PW', description: 'The password (visible in the process list; prefer --password-stdin).' },
  { flag: '--password-stdin', type: 'boolean', description: 'Read the password from standard input.' },
];

export const USER_COMMANDS = {
  add: { usage: 'user add NAME [--password PW | --password-stdin] [--admin]', summary: 'Creates a user and their storage folder.', arity: 1, options: [...PASSWORD_OPTIONS, { flag: '--admin', type: 'boolean', description: 'Make the user an administrator.' }] },
  remove: { usage: 'user remove NAME [--delete-files]', summary: 'Removes a user; their sessions and path tokens stop working at once.', arity: 1, options: [{ flag: '--delete-files', type: 'boolean', description: "Also delete the user's files (otherwise they stay in the data directory)." }] },
  passwd: { usage: 'user passwd NAME [--password PW | --password-stdin]', summary: "Sets a password; revokes all of that user's sessions and path tokens.", arity: 1, options: PASSWORD_OPTIONS },
  list: { usage: 'user list', summary: 'Lists users.', arity: 0, options: [] },
  admin: { usage: 'user admin NAME on|off', summary: 'Grants or takes the administrator right (never from the last administrator).', arity: 2, options: [] },
  local: { usage: 'user local NAME on|off', summary: 'Marks a local account: under --oidc-only it keeps password sign-in (a break-glass administrator).', arity: 2, options: [] },
  sso: { usage: 'user sso NAME on|off', summary: 'Lets the next single sign-on with this username take over the (password) account and link it to that identity, once.', arity: 2, options: [] },
  quota: { usage: 'user quota NAME SIZE|none', summary: 'Sets the storage quota of a user (SIZE like 10G, 500M; 1K = 1024 bytes), or removes it.', arity: 2, options: [] },
} satisfies Record<string, { usage: string; summary: string; arity: number; options: ExtraOption[] }>;

async function password(values: Record<string, unknown>, confirm: boolean): Promise<string> {
  if (typeof values.password === 'string' && values['password-stdin']) throw new UsageError('use either --password or --password-stdin, not both');
  if (typeof values.password === 'string') return values.password;
  if (values['password-stdin']) return passwordFromStdin();
  return passwordFromTerminal('Password: ', confirm);
}

/** Runs one user command against the data directory; safe beside a running server (SQLite WAL). */
export async function runUserCommand(command: keyof typeof USER_COMMANDS, args: readonly string[], values: Record<string, unknown>, config: Config): Promise<number> {
  const name = args[0];
  const onOff = args[1];
  if (command === 'sso' && onOff !== 'on' && onOff !== 'off') throw new UsageError(`usage: file-cloud ${USER_COMMANDS.sso.usage}`);
  if (command === 'local' && onOff !== 'on' && onOff !== 'off') throw new UsageError(`usage: file-cloud ${USER_COMMANDS.local.usage}`);
  if (command === 'admin' && onOff !== 'on' && onOff !== 'off') throw new UsageError(`usage: file-cloud ${USER_COMMANDS.admin.usage}`);
  // Ask for the password before touching the data directory, so a usage error changes nothing.
  const pw = command === 'add' || command === 'passwd' ? await password(values, true) : undefined;
  const quota = command === 'quota' ? parseQuota(args[1] ?? '') : undefined;
  if (quota === undefined && command === 'quota') throw new UsageError(`"${args[1]}" is not a size: use a number of bytes with an optional unit (K, M, G, T), like 10G or 500M, or "none"`);
  const opened = await openCommandServices(config);
  const { users } = opened.services;
  const audit = cliAudit(opened.services.audit);
  try {
    switch (command) {
      case 'add':
        await users.add(name as string, pw as string, values.admin === true);
        await audit('user.created', name as string, { admin: values.admin === true });
        process.stderr.write(`Created user "${name}"${values.admin === true ? ' (administrator)' : ''}.\n`);
        break;
      case 'remove':
        await users.remove(name as string, values['delete-files'] === true);
        await audit('user.removed', name as string, { delete_files: values['delete-files'] === true });
        process.stderr.write(`Removed user "${name}"${values['delete-files'] === true ? ' and their files' : '; their files stay in the data directory'}.\n`);
        break;
      case 'passwd':
        await users.setPassword(name as string, pw as string);
        await audit('user.password_reset', name as string);
        process.stderr.write(`Changed the password of "${name}"; their sessions and path tokens are revoked.\n`);
        break;
      case 'admin':
        await users.setAdmin(name as string, onOff === 'on');
        await audit('user.admin_changed', name as string, { admin: onOff === 'on' });
        process.stderr.write(`"${name}" is ${onOff === 'on' ? 'now an administrator' : 'no longer an administrator'}.\n`);
        break;
      case 'local':
        await users.setLocal(name as string, onOff === 'on');
        await audit('user.local_changed', name as string, { local: onOff === 'on' });
        process.stderr.write(`"${name}" ${onOff === 'on' ? 'keeps password sign-in under --oidc-only' : 'no longer keeps password sign-in under --oidc-only'}.\n`);
        break;
      case 'sso':
        await users.setLinkPending(name as string, onOff === 'on');
        await audit('user.sso_link_changed', name as string, { pending: onOff === 'on' });
        process.stderr.write(onOff === 'on' ? `The next single sign-on as "${name}" will link that identity to this account.\n` : `"${name}" is no longer waiting for a single sign-on link.\n`);
        break;
      case 'list':
        for (const u of await users.list()) process.stdout.write(`${u.username}${u.isAdmin ? '\tadmin' : ''}\n`);
        break;
      case 'quota': {
        await opened.services.storageUsage.setQuota(name as string, quota as number | null);
        await audit('user.quota_changed', name as string, { quota });
        process.stderr.write(quota === null ? `Removed the quota of "${name}".\n` : `Set the quota of "${name}" to ${formatSize(quota as number)} (${quota} bytes).\n`);
        break;
      }
    }
  } finally {
    await opened.close();
  }
  return 0;
}
