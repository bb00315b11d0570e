import { crc32 } from 'node:zlib';

export type ReadEntry = { name: string; flags: number; crc: number; size: number; data: Buffer | undefined };

/**
 * A small independent reader for the stored zips the server makes, for
 * route tests: walks the central directory from the end record (no ZIP64, no
 * comment), reads each local header and its data, and checks each CRC.
 * The real-tool tests (test/clients/zip-tools.test.ts) cover the rest.
 */
export function readZip(zip: Buffer): ReadEntry[] {
  const end = zip.length - 22;
  if (zip.readUInt32LE(end) !== 0x06054b50) throw new Error('no end record');
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const out: ReadEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`no central header at ${at}`);
    const flags = zip.readUInt16LE(at + 8);
    const method = zip.readUInt16LE(at + 10);
    const crc = zip.readUInt32LE(at + 16);
    const size = zip.readUInt32LE(at + 24);
    const nameLen = zip.readUInt16LE(at + 28);
    const extraLen = zip.readUInt16LE(at + 30);
    const commentLen = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + nameLen).toString('utf8');
    if (method !== 0) throw new Error('not stored');
    if (zip.readUInt32LE(local) !== 0x04034b50) throw new Error(`no local header for ${name}`);
    const localName = zip.subarray(local + 30, local + 30 + zip.readUInt16LE(local + 26)).toString('utf8');
    if (localName !== name) throw new Error(`local name ${localName} ≠ central ${name}`);
    const dataStart = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = name.endsWith('/') ? undefined : zip.subarray(dataStart, dataStart + size);
    if (data && crc32(data) !== crc) throw new Error(`CRC mismatch for ${name}`);
    if (data && flags & 8) {
      if (zip.readUInt32LE(dataStart + size) !== 0x08074b50 || zip.readUInt32LE(dataStart + size + 4) !== crc) throw new Error(`bad data descriptor for ${name}`);
    }
    out.push({ name, flags, crc, size, data });
    at += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}
