import { createRequire } from 'node:module';
import { nativeDisabled } from '../native-off.js';

/**
 * File Cloud's optional native AES-GCM (native/gcm-part.c), built by
 * scripts/build-native.mjs at npm's postinstall when a compiler and Node's
 * headers are there. Without it, or with FILE_CLOUD_NATIVE_CRYPTO=0, the
 * same reads and writes run on node:crypto: the stored format is one,
 * either path reads what the other wrote.
 */
export type NativeGcm = {
  /**
   * Checks the GMAC of aadPadded ‖ text against expectedTag, then decrypts
   * `part` (a view inside text) with AES-256-CTR from `counter` into `out`;
   * false when the tag does not match. A TypeError for a wrong argument.
   */
  openPart(key: Uint8Array, nonce: Uint8Array, aadPadded: Uint8Array, text: Uint8Array, expectedTag: Uint8Array, counter: Uint8Array, part: Uint8Array, out: Uint8Array): boolean;
  /**
   * One AES-256-GCM message: the plaintext `parts` (in order) encrypted into
   * `out` from its first byte, the tag into `tag`. A TypeError for a wrong
   * argument (out too short for the parts or overlapping one).
   */
  seal(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, parts: readonly Uint8Array[], out: Uint8Array, tag: Uint8Array): void;
};

/** The module's place from dist/src/lib/encryption/ (compiled) up to the package root. */
const MODULE = '../../../../native/build/Release/gcm_part.node';


function load(): { gcm: NativeGcm | undefined; why: string } {
  if (nativeDisabled(process.env.FILE_CLOUD_NATIVE_CRYPTO)) return { gcm: undefined, why: 'JavaScript (FILE_CLOUD_NATIVE_CRYPTO=0)' };
  try {
    const gcm = createRequire(import.meta.url)(MODULE) as NativeGcm;
    return typeof gcm.openPart === 'function' && typeof gcm.seal === 'function' ? { gcm, why: 'native' } : { gcm: undefined, why: 'JavaScript (native/ gave no openPart or seal: built from older sources)' };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'MODULE_NOT_FOUND' ? 'is not built, scripts/build-native.mjs builds it' : `does not load: ${e instanceof Error ? e.message : String(e)}`;
    return { gcm: undefined, why: `JavaScript (native/gcm-part.c ${why})` };
  }
}

const loaded = load();
/** The native functions, or undefined when the JavaScript path runs. */
export const nativeGcm: NativeGcm | undefined = loaded.gcm;
/** Which path runs and, for the JavaScript one, why: for run-tests' start line and the server's log. */
export const nativeGcmPath: string = loaded.why;
