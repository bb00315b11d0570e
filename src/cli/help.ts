import { OPTIONS, type OptionScope } from '../config/options.js';
import type { ExtraOption } from './args.js';

function optionLines(scopes: readonly OptionScope[], extra: readonly ExtraOption[]): string[] {
  const rows: [string, string][] = [];
  for (const o of extra) rows.push([o.type === 'string' ? `${o.flag} ${o.value ?? 'VALUE'}` : o.flag, o.description]);
  for (const spec of Object.values(OPTIONS)) {
    if (!scopes.includes(spec.scope)) continue;
    const flag = spec.type === 'string' ? `${spec.flag} VALUE` : spec.flag;
    const def = 'defaultLabel' in spec ? spec.defaultLabel : String(spec.default);
    rows.push([flag, `${spec.description} [env ${spec.env}; default ${def}]`]);
  }
  rows.push(['--help', 'Show this help.']);
  const width = Math.max(...rows.map(([f]) => f.length)) + 2;
  return rows.map(([f, d]) => `  ${f.padEnd(width)}${d}`);
}

export function commandHelp(usage: string, summary: string, scopes: readonly OptionScope[], extra: readonly ExtraOption[] = []): string {
  return [`Usage: ${usage}`, '', summary, '', 'Options:', ...optionLines(scopes, extra), ''].join('\n');
}

export const MAIN_HELP = `Usage: file-cloud <command> [options]

File Cloud: a self-hosted file storage server with an HTTP API and a web UI.

Commands:
  serve                      Run the server (first run creates user "admin" and prints its password).
  user add NAME              Create a user and their storage folder.
  user remove NAME           Remove a user; their sessions and path tokens stop working at once.
  user passwd NAME           Set a user's password; revokes all their sessions and path tokens.
  user admin NAME on|off     Grant or take the administrator right (never from the last administrator).
  user list                  List users.
  user quota NAME SIZE|none  Set a user's storage quota (like 10G or 500M) or remove it.
  group add|remove NAME      Create or remove a group of users.
  group member NAME add|remove USER
                             Add a user to a group or remove them.
  group list                 List groups and their members.
  index                      Rescan storage into the search index and the usage figures (files other tools put there).
  encryption keygen PATH     Write a new encryption key file (mode 0600) for --encryption-key-file.
  encryption migrate         Encrypt the files written before the key was given (resumable, safe while serving).
  encryption rotate --new-key-file PATH
                             Re-wrap every data key under a new key (contents unchanged; server stopped).
  audit verify               Check the audit log's hash chain; exit 1 at the first altered or removed entry.

Global options:
  --data-dir DIR             Data directory [env FILE_CLOUD_DATA_DIR; default ./data]
  --debug                    Print stack traces of failures.
  --help                     Show help; "file-cloud <command> --help" for a command's options.
  --version                  Print the version.
`;
