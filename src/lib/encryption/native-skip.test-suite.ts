import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { nativeDisabled } from '../native-off.js';
import { nativeGcm, nativeGcmPath } from './native-gcm.js';

/**
 * Whether a test of the native path skips for want of the native module
 * (true: it called t.skip with the reason the loader gave, e.g.
 * FILE_CLOUD_NATIVE_CRYPTO=0 or "not built"). In CI, which must build it
 * (scripts/build-native.mjs at npm ci), its absence fails the test instead.
 */
export function skippedWithoutNative(t: TestContext): boolean {
  if (nativeGcm !== undefined) return false;
  if (process.env.CI && !nativeDisabled(process.env.FILE_CLOUD_NATIVE_CRYPTO)) assert.fail(`CI must build the native module: ${nativeGcmPath}`);
  t.skip(`the native AES-GCM module is not in use here, the path is ${nativeGcmPath}`);
  return true;
}
