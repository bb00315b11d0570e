// The composition root (src/app/services.ts): the server and every CLI command take their services
// from it. Each runs on a second opening of a test app's data directory, as a CLI command beside a
// running server does.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { createServices, type ServiceLog, type Services } from '../../src/app/services.js';
import { parseDecodedStoragePath } from '../../src/domain/storage-path.js';
import { openDataDir } from '../../src/main.js';
import { openCommandServices } from '../../src/cli/command-services.js';
import type { StorageBackend } from '../../src/storage/backend.js';
import type { StorageEvents } from '../../src/storage/events.js';
import { BACKENDS, s3Credentials, startApp, testHasher } from '../helpers/app.js';

const quiet: ServiceLog = { warn: () => undefined, error: () => undefined, info: () => undefined };

/** The real backend, with a count of the storage-event listeners subscribed to it right now. */
function countingListeners(backend: StorageBackend): { backend: StorageBackend; live(): number } {
  let live = 0;
  const events: StorageEvents = {
    subscribe(listener) {
      live++;
      const off = backend.events.subscribe(listener);
      let on = true;
      return () => {
        if (on) live--;
        on = false;
        off();
      };
    },
  };
  const counted = new Proxy(backend, {
    get(target, name) {
      if (name === 'events') return events;
      const value = Reflect.get(target, name, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { backend: counted, live: () => live };
}

/** Every service the root offers, each read (so built) once. */
async function buildEvery(services: Services): Promise<string[]> {
  const names: string[] = [];
  for (const name of Object.keys(services) as (keyof Services)[]) {
    if (name === 'close' || name === 'onAuditAppend' || name === 'oidcSettings') continue;
    if (name === 'oidc') await services.oidc();
    else void services[name];
    names.push(name);
  }
  return names;
}

const write = (backend: StorageBackend, path: string, bytes: number) =>
  backend.write(parseDecodedStoragePath(`alice/${path}`).key, Readable.from([Buffer.alloc(bytes, 1)]), { ifExists: 'replace' });

for (const [storage, skip] of BACKENDS) {
  test(`${storage}: the composition root builds a service on first use and once; a command that touches only users follows no storage event`, { skip }, async () => {
    const t = await startApp({ storage, users: ['alice'] });
    const opened = await openDataDir(t.config, false, { credentials: s3Credentials() });
    const counted = countingListeners(opened.backend);
    const services = createServices(t.config, opened.store, counted.backend, { log: quiet, secret: randomBytes(32), hasher: testHasher(), command: true });
    try {
      await services.users.add('bob', 'bob-password', false);
      assert.equal(counted.live(), 0, 'the users service alone subscribes to nothing');
      assert.equal(services.storageUsage, services.storageUsage, 'one instance per root');
      assert.equal(services.files, services.files);
      const before = (await opened.store.usage.get('alice'))?.used ?? 0;
      await write(counted.backend, 'a.bin', 5);
      await services.storageUsage.flush();
      assert.equal((await opened.store.usage.get('alice'))?.used, before + 5, 'the usage service built on first use counts the write');
    } finally {
      await services.close();
      await opened.backend.close();
      await opened.store.close();
      await t.close();
    }
  });

  test(`${storage}: close() ends the storage-event subscriptions of every service the root built`, { skip }, async () => {
    const t = await startApp({ storage, users: ['alice'] });
    const opened = await openDataDir(t.config, false, { credentials: s3Credentials() });
    const counted = countingListeners(opened.backend);
    const services = createServices(t.config, opened.store, counted.backend, { log: quiet, secret: randomBytes(32), hasher: testHasher() });
    try {
      const built = await buildEvery(services);
      assert.ok(built.includes('search') && built.includes('versions') && built.includes('shares'), built.join(', '));
      assert.ok(counted.live() > 0, 'the services that follow storage events subscribed');
      await services.close();
      assert.equal(counted.live(), 0, 'a subscription outlived close()');
      // Closed twice (an app closed after a failed start, then again): nothing left to end.
      await services.close();
      assert.equal(counted.live(), 0);
    } finally {
      await opened.backend.close();
      await opened.store.close();
      await t.close();
    }
  });
}

test('a root on the metadata store alone (audit verify) builds the audit service and refuses every service that needs storage', async () => {
  const t = await startApp({ users: ['alice'] });
  const opened = await openCommandServices(t.config, { storage: false });
  try {
    const verified = await opened.services.audit.verify();
    assert.equal(verified.ok, true);
    for (const needsStorage of ['files', 'users', 'trash', 'zips', 'thumbnails'] as const) {
      assert.throws(() => opened.services[needsStorage], /storage backend/, needsStorage);
    }
  } finally {
    await opened.close();
    await t.close();
  }
});
