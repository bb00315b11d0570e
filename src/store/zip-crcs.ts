/** Remembered CRC-32s of file contents for folder zips (src/zip/stream.ts CrcCache). */
export interface ZipCrcRepo {
  getMany(keys: readonly string[]): Promise<Map<string, number>>;
  /** Inserts the rows whose key is new; an existing key keeps its value (it names the same content). */
  putMany(rows: readonly { key: string; crc: number }[], now: number): Promise<void>;
}
