import { test } from 'node:test';
import type { MetadataStore } from '../metadata-store.js';

/** Opens a fresh, empty store of the implementation under test, and removes it afterwards. */
export type OpenStore = () => Promise<{ store: MetadataStore; cleanup(): Promise<void> }>;

/**
 * The harness of every store conformance suite: each test gets a fresh store, which is closed and
 * removed after it, passed or failed. The title is prefixed with the implementation's name.
 */
export function storeTest(prefix: string, open: OpenStore) {
  return (title: string, fn: (store: MetadataStore) => Promise<void>) =>
    test(`${prefix}: ${title}`, async () => {
      const { store, cleanup } = await open();
      try {
        await fn(store);
      } finally {
        await store.close();
        await cleanup();
      }
    });
}
