/**
 * The plaintext of small encrypted files read lately, each kept with the
 * exact stored bytes it was opened from (header and chunks). Opening a file
 * is a pure function of the master keys (fixed for the process) and those
 * bytes: the same bytes give the same plaintext and pass the same tags. So
 * a read whose stored bytes equal a kept entry's, byte for byte, takes the
 * kept plaintext without a decipher; any other bytes (a changed file, a
 * flipped byte, a swapped chunk) miss and are opened and authenticated as
 * before. For small files only: there a decipher's setup, not the AES,
 * is the cost (docs/performance.md, issue 51 stop 66).
 */
export type PlainMemo = {
  /** The plaintext once opened from exactly `stored` under `label`, if still kept. */
  get(label: string, stored: Buffer): Buffer | undefined;
  /** Keeps `plain` as what `stored` opens to (copied: a read's buffer may be lent); too large ones are not kept. */
  set(label: string, stored: Buffer, plain: Buffer): void;
  /** Bytes kept (stored and plain together). */
  readonly bytes: number;
};

type Kept = { readonly stored: Buffer; readonly plain: Buffer };

/** Memory of its own, exactly `b`'s size (a view into a pool's slab or a lent buffer would keep more alive, or change). */
function own(b: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(b.length);
  b.copy(copy);
  return copy;
}

/**
 * A memo of at most `budget` bytes (stored plus plain), of files whose
 * plaintext is at most `fileMax` bytes; the least lately used go first.
 */
export function plainMemo(budget: number, fileMax: number): PlainMemo {
  const kept = new Map<string, Kept>();
  let bytes = 0;
  const drop = (label: string, k: Kept): void => {
    kept.delete(label);
    bytes -= k.stored.length + k.plain.length;
  };
  return {
    get(label, stored) {
      const k = kept.get(label);
      if (k === undefined || !k.stored.equals(stored)) return undefined;
      // Most lately used last.
      kept.delete(label);
      kept.set(label, k);
      return k.plain;
    },
    set(label, stored, plain) {
      const old = kept.get(label);
      if (old !== undefined) drop(label, old);
      const size = stored.length + plain.length;
      if (plain.length > fileMax || size > budget) return;
      while (bytes + size > budget) {
        const [first, k] = kept.entries().next().value!;
        drop(first, k);
      }
      kept.set(label, { stored: own(stored), plain: own(plain) });
      bytes += size;
    },
    get bytes() {
      return bytes;
    },
  };
}
