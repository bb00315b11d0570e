import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { PHONE, launchBrowser, missingBrowser, newPage, row, screenshot, signIn, startServer, type ServerProcess } from './browser.js';
import { bearer, login, postJson } from '../helpers/client.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

type Group = { name: string; members: string[] };

/**
 * Groups in the web UI (until now only the CLI and the API): an admin page
 * to create groups, add and remove members and remove a group, reached from
 * the account menu; each user's groups on the Users page. Checked against
 * what GET /api/admin/groups then holds.
 */
describe('web UI: groups', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let admin: Record<string, string>;
  const groups = async (): Promise<Group[]> => ((await (await fetch(`${server.url}/api/admin/groups`, { headers: admin })).json()) as { groups: Group[] }).groups;

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    admin = bearer((await login(server.url, 'admin', server.adminPassword)).access_token);
    for (const username of ['bea', 'carl', 'dora']) assert.equal((await postJson(`${server.url}/api/admin/users`, { username, password: `${username}-password-1` }, admin)).status, 201);
    assert.equal((await postJson(`${server.url}/api/admin/groups`, { name: 'ops', members: ['dora'] }, admin)).status, 201);
    assert.equal((await postJson(`${server.url}/api/admin/groups`, { name: 'crew', members: ['admin', 'carl'] }, admin)).status, 201);
    // bea shares a folder with the group ops (dora is in it) and another with dora by name and through ops.
    const bea = bearer((await login(server.url, 'bea', 'bea-password-1')).access_token);
    for (const folder of ['Plans', 'Both']) {
      assert.equal((await fetch(`${server.url}/storage/bea/${folder}/x.txt`, { method: 'PUT', headers: { ...bea, 'content-type': 'text/plain' }, body: 'x' })).status, 201);
      assert.equal((await postJson(`${server.url}/api/grants`, { path: `/bea/${folder}`, to: 'group:ops', permission: 'read' }, bea)).status, 201);
    }
    assert.equal((await postJson(`${server.url}/api/grants`, { path: '/bea/Both', to: 'user:dora', permission: 'write' }, bea)).status, 201);
    // admin has shared with carl before: carl is someone admin knows.
    assert.equal((await fetch(`${server.url}/storage/admin/Old/o.txt`, { method: 'PUT', headers: { ...admin, 'content-type': 'text/plain' }, body: 'o' })).status, 201);
    assert.equal((await postJson(`${server.url}/api/grants`, { path: '/admin/Old', to: 'user:carl', permission: 'read' }, admin)).status, 201);
    assert.equal((await fetch(`${server.url}/storage/admin/Report.txt`, { method: 'PUT', headers: { ...admin, 'content-type': 'text/plain' }, body: 'r' })).status, 201);
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  test('from the account menu: create a group with members, add one, remove one, an unknown name refused in place, remove the group', async () => {
    const { context, page, errors, consoleErrors } = await newPage(browser);
    try {
      await signIn(page, server, '/browse/');
      await page.getByRole('button', { name: 'Account: admin' }).click();
      await page.getByRole('menuitem', { name: 'Groups' }).click();
      await page.getByRole('heading', { level: 1, name: 'Groups' }).waitFor();
      const list = page.getByRole('list', { name: 'Groups' });
      await list.getByRole('listitem').filter({ hasText: 'ops' }).getByText('dora').waitFor();

      await page.getByRole('toolbar', { name: 'Group actions' }).getByRole('button', { name: 'New group' }).click();
      const create = page.getByRole('dialog', { name: 'New group' });
      await create.getByLabel('Name').fill('team');
      await create.getByLabel('Members').fill('bea, carl');
      await create.getByRole('button', { name: 'Create group' }).click();
      await create.waitFor({ state: 'detached' });
      const team = list.getByRole('listitem').filter({ has: page.getByText('team', { exact: true }) });
      await team.getByRole('list', { name: 'Members of team' }).getByText('carl').waitFor();
      assert.deepEqual((await groups()).find((g) => g.name === 'team')?.members.sort(), ['bea', 'carl']);

      await team.getByLabel('Add a member to team').fill('dora');
      await team.getByRole('button', { name: 'Add', exact: true }).click();
      await team.getByRole('list', { name: 'Members of team' }).getByText('dora').waitFor();
      await screenshot(page, 'groups');
      // Each group is a card as each user is on the Users page: a border round it, its picture beside its name.
      const ops = page.locator('.group-item[data-name="ops"]');
      const border = await ops.evaluate((e) => (globalThis as unknown as { getComputedStyle(e: unknown): { borderTopStyle: string } }).getComputedStyle(e).borderTopStyle);
      assert.equal(border, 'solid', 'the group has a border like a user');
      const picture = (await ops.locator('.avatar').boundingBox())!;
      const name = (await ops.locator('.item-name').boundingBox())!;
      assert.ok(name.x >= picture.x + picture.width && name.y < picture.y + picture.height, `the name beside the picture, not below it: ${JSON.stringify({ picture, name })}`);
      await team.getByRole('button', { name: 'Remove bea from team' }).click();
      await team.getByRole('list', { name: 'Members of team' }).getByText('bea').waitFor({ state: 'detached' });
      assert.deepEqual((await groups()).find((g) => g.name === 'team')?.members.sort(), ['carl', 'dora']);

      await team.getByLabel('Add a member to team').fill('nobody');
      await team.getByRole('button', { name: 'Add', exact: true }).click();
      await team.getByRole('alert').filter({ hasText: 'There is no user named “nobody”.' }).waitFor();
      assert.deepEqual((await groups()).find((g) => g.name === 'team')?.members.sort(), ['carl', 'dora'], 'nothing changed');

      await team.getByRole('button', { name: 'Remove group team' }).click();
      const confirm = page.getByRole('dialog', { name: 'Remove the group “team”?' });
      await confirm.getByRole('button', { name: 'Remove group' }).click();
      await confirm.waitFor({ state: 'detached' });
      await team.waitFor({ state: 'detached' });
      assert.deepEqual((await groups()).map((g) => g.name).sort(), ['crew', 'ops']);
      assert.deepEqual(consoleErrors, []);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test('"Shared with me" says when access comes through a group', async () => {
    const dora = await newPage(browser);
    try {
      await signIn(dora.page, server, '/login', { username: 'dora', password: 'dora-password-1' });
      await dora.page.goto(`${server.url}/with-me`);
      const list = dora.page.getByRole('list', { name: 'Shared with me' });
      await list.getByRole('listitem').filter({ hasText: 'Plans' }).getByText(/· through the group ops/).waitFor();
      await list.getByRole('listitem').filter({ hasText: 'Both' }).getByText(/also through the group ops/).waitFor();
      assert.deepEqual(dora.errors, []);
      assert.deepEqual(dora.consoleErrors, []);
    } finally {
      await dora.context.close();
    }
  });

  test('the share dialog suggests one\'s groups and the people one shares with; a suggestion picked by keyboard is shared with', async () => {
    const { context, page, errors, consoleErrors } = await newPage(browser);
    try {
      await signIn(page, server, '/browse/');
      await row(page, 'Report.txt').getByRole('button', { name: 'Actions for Report.txt', exact: true }).click();
      await page.getByRole('menuitem', { name: 'Share…' }).click();
      const people = page.getByRole('dialog', { name: 'Share “Report.txt”' }).getByRole('region', { name: 'Share with people' });
      const field = people.getByRole('combobox', { name: 'Person or group' });
      await field.fill('c');
      const options = people.getByRole('listbox', { name: 'Suggestions' }).getByRole('option');
      await options.nth(1).waitFor();
      assert.deepEqual((await options.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()), ['crew Group', 'carl Person'], 'groups first; nobody admin does not know');
      await field.press('ArrowDown');
      await field.press('Enter');
      assert.equal(await field.inputValue(), 'group:crew');
      await people.getByRole('button', { name: 'Share', exact: true }).click();
      await people.getByRole('list', { name: 'Shared with' }).getByText('crew (group)').waitFor();
      const given = ((await (await fetch(`${server.url}/api/grants`, { headers: admin })).json()) as { grants: { path: string; to: string }[] }).grants;
      assert.ok(given.some((g) => g.path === '/admin/Report.txt' && g.to === 'group:crew'), JSON.stringify(given));
      // Shared with crew already: it is suggested no more.
      await field.fill('cr');
      await field.fill('c');
      await options.first().waitFor();
      assert.deepEqual((await options.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()), ['carl Person']);
      assert.deepEqual(consoleErrors, []);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test('the Users page shows each user\'s groups', async () => {
    const { context, page, errors } = await newPage(browser);
    try {
      await signIn(page, server, '/browse/');
      await page.goto(`${server.url}/admin/users`);
      const users = page.getByRole('list', { name: 'Users' });
      await users.getByRole('listitem').filter({ hasText: 'dora' }).getByText('Groups: ops').waitFor();
      assert.equal(await users.getByRole('listitem').filter({ hasText: 'bea' }).getByText(/Groups:/).count(), 0);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test('a non-admin has no Groups page; on a phone the page fits', async () => {
    const bea = await newPage(browser);
    const phone = await newPage(browser, { viewport: PHONE });
    try {
      await signIn(bea.page, server, '/login', { username: 'bea', password: 'bea-password-1' });
      await bea.page.getByRole('button', { name: 'Account: bea' }).click();
      await bea.page.getByRole('menuitem', { name: 'Settings' }).waitFor();
      assert.equal(await bea.page.getByRole('menuitem', { name: 'Groups' }).count(), 0);
      await bea.page.goto(`${server.url}/admin/groups`);
      await bea.page.getByText('Only administrators can manage groups').waitFor();

      await signIn(phone.page, server, '/browse/');
      await phone.page.goto(`${server.url}/admin/groups`);
      await phone.page.getByRole('list', { name: 'Groups' }).getByRole('listitem').first().waitFor();
      assert.equal(await phone.page.evaluate('document.documentElement.scrollWidth'), PHONE.width);
      assert.deepEqual(phone.errors, []);
    } finally {
      await bea.context.close();
      await phone.context.close();
    }
  });
});
