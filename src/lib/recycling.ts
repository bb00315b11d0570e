import type { Readable } from 'node:stream';

/**
 * A stream whose chunks may be handed back once their reader is done with
 * them (the socket took them, or a decryption opened them), to be read into
 * again (storage/local/file-reader.ts).
 */
export interface Recycling {
  recycle(chunk: Buffer): void;
}

export const recycles = (s: Readable): s is Readable & Recycling => typeof (s as Partial<Recycling>).recycle === 'function';
