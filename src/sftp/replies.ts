import { AppError, type ErrorCode } from '../domain/errors.js';

/** SFTP v3 status codes (draft-ietf-secsh-filexfer-02 §7). */
export const STATUS = { OK: 0, EOF: 1, NO_SUCH_FILE: 2, PERMISSION_DENIED: 3, FAILURE: 4, BAD_MESSAGE: 5, OP_UNSUPPORTED: 8 } as const;
export type StatusCode = (typeof STATUS)[keyof typeof STATUS];

const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

/** What SFTP shows of an entry: a regular file or a folder, its size and time; owner and modes are not kept. */
export type SftpAttrs = { mode: number; uid: number; gid: number; size: number; atime: number; mtime: number };

export function attrsOf(e: { isFile: boolean; size: number; modified: Date }, writable: boolean): SftpAttrs {
  const seconds = Math.floor(e.modified.getTime() / 1000);
  const perm = e.isFile ? (writable ? 0o644 : 0o444) : writable ? 0o755 : 0o555;
  return { mode: (e.isFile ? S_IFREG : S_IFDIR) | perm, uid: 0, gid: 0, size: e.isFile ? e.size : 0, atime: seconds, mtime: seconds };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The `ls -l` line OpenSSH's `sftp` prints for `ls -l` (READDIR's longname); times in UTC. */
export function longname(name: string, a: SftpAttrs, owner: string, now: Date): string {
  const bits = 'rwxrwxrwx';
  let perm = (a.mode & S_IFDIR) === S_IFDIR ? 'd' : '-';
  for (let i = 0; i < 9; i++) perm += a.mode & (1 << (8 - i)) ? bits[i] : '-';
  const t = new Date(a.mtime * 1000);
  const recent = Math.abs(now.getTime() - t.getTime()) < 182 * 86_400_000;
  const day = String(t.getUTCDate()).padStart(2, ' ');
  const when = recent ? `${String(t.getUTCHours()).padStart(2, '0')}:${String(t.getUTCMinutes()).padStart(2, '0')}` : ` ${t.getUTCFullYear()}`;
  return `${perm}    1 ${owner.padEnd(8)} ${owner.padEnd(8)} ${String(a.size).padStart(8)} ${MONTHS[t.getUTCMonth()]} ${day} ${when} ${name}`;
}

const NO_SUCH: ReadonlySet<ErrorCode> = new Set(['not_found', 'not_a_directory']);
const DENIED: ReadonlySet<ErrorCode> = new Set(['unauthorized', 'forbidden', 'locked', 'invalid_credentials']);

/**
 * The SFTP status of an error: the contract's code and message ride in the status text
 * (`quota_exceeded: …`), since SFTP v3 has no codes for most of them. Anything but an AppError
 * is the server's fault: `internal`, its cause logged, never sent.
 */
export function statusOf(e: unknown): { code: StatusCode; message: string; fault: boolean } {
  if (!(e instanceof AppError)) return { code: STATUS.FAILURE, message: 'internal: The server failed; the error is logged.', fault: true };
  const code = NO_SUCH.has(e.code) ? STATUS.NO_SUCH_FILE : DENIED.has(e.code) ? STATUS.PERMISSION_DENIED : e.code === 'method_not_allowed' ? STATUS.OP_UNSUPPORTED : STATUS.FAILURE;
  return { code, message: `${e.code}: ${e.message}`, fault: false };
}
