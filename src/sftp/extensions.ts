import type { SFTPWrapper } from 'ssh2';

/** SFTP v3 VERSION (draft-ietf-secsh-filexfer-02 §4). */
const VERSION = 2;
const PROTOCOL_VERSION = 3;

/**
 * A VERSION packet naming `extensions` (name, then version data, each an SSH string), as OpenSSH's
 * sftp-server announces its own (`posix-rename@openssh.com` "1").
 */
export function versionPacket(extensions: Readonly<Record<string, string>>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, data] of Object.entries(extensions)) parts.push(sshString(name), sshString(data));
  const body = Buffer.concat([Buffer.from([VERSION, 0, 0, 0, PROTOCOL_VERSION]), ...parts]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  return Buffer.concat([length, body]);
}

/** Whether `payload` is the bare VERSION answer ssh2 sends (version 3, no extensions). */
export function isBareVersion(payload: Buffer): boolean {
  return payload.length === 9 && payload.readUInt32BE(0) === 5 && payload[4] === VERSION && payload.readUInt32BE(5) === PROTOCOL_VERSION;
}

function sshString(s: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(b.length);
  return Buffer.concat([length, b]);
}

/** What ssh2's server-side SFTP stream keeps of its channel (ssh2 1.x, lib/protocol/SFTP.js). */
type SftpInternals = {
  push(data: Buffer): unknown;
  _version: number;
  _protocol: { channelData(id: number, data: Buffer): void };
  outgoing: { id: number; window: number };
};

/**
 * Makes the server's VERSION answer name `extensions`. ssh2 answers a client's INIT with a fixed
 * packet that names none, and clients use an extension only when it is named: without
 * `posix-rename@openssh.com` sshfs fails every rename onto an existing file (an editor's save, an
 * rsync) unless mounted with `-o workaround=rename`, and OpenSSH's `sftp` cannot rename onto one.
 * While the INIT is read (the one packet before a version is set), the bare answer ssh2 writes to
 * the channel is swapped for one naming the extensions, and the channel's send window is charged
 * for the extra bytes. Should ssh2 change how it answers, nothing is swapped and clients see the
 * bare answer: they then fall back to their workarounds.
 */
export function announceExtensions(sftp: SFTPWrapper, extensions: Readonly<Record<string, string>>): void {
  const s = sftp as unknown as SftpInternals;
  if (typeof s.push !== 'function' || typeof s._protocol?.channelData !== 'function' || typeof s.outgoing?.window !== 'number') return;
  const reply = versionPacket(extensions);
  const push = s.push.bind(s);
  s.push = (data: Buffer) => {
    if (s._version !== -1) return push(data);
    const protocol = s._protocol;
    const channelData = protocol.channelData;
    protocol.channelData = (id: number, payload: Buffer) => {
      const extra = reply.length - payload.length;
      if (id === s.outgoing.id && isBareVersion(payload) && s.outgoing.window >= extra) {
        s.outgoing.window -= extra;
        return channelData.call(protocol, id, reply);
      }
      return channelData.call(protocol, id, payload);
    };
    try {
      return push(data);
    } finally {
      protocol.channelData = channelData;
    }
  };
}
