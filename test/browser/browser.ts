/**
 * Helpers for the web UI's browser tests: Debian's Chromium driven by
 * playwright-core (nothing downloads a browser), a real server from the
 * shared harness, seeding a user's files straight on disk, and screenshots.
 * Test code runs under the root tsconfig (no DOM types): page-side code is
 * passed as strings or typed loosely.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { REPO_ROOT, runCli, startServer, type ServerProcess } from '../helpers/server.js';

export { startServer, type ServerProcess };

export const CHROMIUM = process.env.FILE_CLOUD_CHROMIUM ?? '/usr/bin/chromium';
export const SCREENSHOT_DIR = join(REPO_ROOT, 'test-output', 'screenshots');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** Why browser tests cannot run here, or undefined when they can. In CI a missing browser is a failure, not a skip. */
export function missingBrowser(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  const why = `Chromium not found at ${CHROMIUM} (install Debian's package: apt-get install chromium)`;
  if (process.env.CI) throw new Error(why);
  return why;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * A fresh context (no cookies, no localStorage; the browser's language when `locale` is given) with a page that fails the test on uncaught page errors.
 * `consoleErrors` collects what the page logs as errors (a failed request is one: "Failed to load
 * resource: … 404"), for the tests that promise a clean console.
 */
export async function newPage(browser: Browser, opts: { viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark'; hasTouch?: boolean; locale?: string } = {}): Promise<{ context: BrowserContext; page: Page; errors: string[]; consoleErrors: string[] }> {
  // `locale` is the browser's language (navigator.languages and Accept-Language), as Chromium's --lang sets it.
  const context = await browser.newContext({ viewport: opts.viewport ?? DESKTOP, colorScheme: opts.colorScheme ?? 'light', acceptDownloads: true, hasTouch: opts.hasTouch ?? false, ...(opts.locale ? { locale: opts.locale } : {}) });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const errors: string[] = [];
  const consoleErrors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(`${m.text()} (${m.location().url})`);
  });
  return { context, page, errors, consoleErrors };
}

/** Signs in through the login form (as admin, or as `as`) and waits for the file list (or the empty state). */
export async function signIn(page: Page, server: ServerProcess, path = '/', as?: { username: string; password: string }): Promise<void> {
  await page.goto(server.url + path);
  await page.getByLabel('Username').fill(as?.username ?? 'admin');
  await page.getByLabel('Password', { exact: true }).fill(as?.password ?? server.adminPassword);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(/\/browse\//);
  await waitForFolder(page);
}

/** Waits until the current folder has loaded: rows, the empty state, or an error state. */
export async function waitForFolder(page: Page): Promise<void> {
  await page.locator('.file-grid, .tile-view, .empty-state').first().waitFor();
}

/** Goes to a folder's address (a full page load) and waits until it has loaded. */
export async function openFolder(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await waitForFolder(page);
}

/** A row of the file list by its exact name. */
export const row = (page: Page, name: string) => page.locator(`.file-grid [role="row"][data-name="${name.replace(/["\\]/g, '\\$&')}"]`);

/** Names shown in the list, in order (only the rendered rows: the list is virtualized). */
export async function shownNames(page: Page): Promise<string[]> {
  return page.locator('.file-grid [role="row"][data-name]').evaluateAll((els) => (els as unknown as { dataset: { name: string }; style: { transform: string } }[])
    .map((e) => ({ name: e.dataset.name, y: Number(/translateY\((\d+)/.exec(e.style.transform)?.[1] ?? 0) }))
    .sort((a, b) => a.y - b.y)
    .map((e) => e.name));
}

/** Writes files into the user's storage on disk (the local backend keeps plain files): `{ 'a/b.txt': 'text' }`. */
export async function seed(server: ServerProcess, files: Record<string, string | Buffer>, user = 'admin'): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const full = join(server.dataDir, 'storage', user, ...path.split('/'));
    if (path.endsWith('/')) await mkdir(full, { recursive: true });
    else {
      await mkdir(dirname(full), { recursive: true });
      await writeFile(full, content);
    }
  }
}

/**
 * Seeds files on disk as `seed` does, then takes them in the way an operator does after copying
 * files in (`file-cloud index`, docs/operations.md): searchable, and counted in the storage figure
 * the header shows (files put there behind the server's back count only after that).
 */
export async function seedIndexed(server: ServerProcess, files: Record<string, string | Buffer>, user = 'admin'): Promise<void> {
  await seed(server, files, user);
  const indexed = await runCli(['index', '--data-dir', server.dataDir]);
  if (indexed.code !== 0) throw new Error(`file-cloud index failed: ${indexed.stderr}`);
}

/** Saves a screenshot under test-output/screenshots/. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`) });
}

/** The same view in light and dark, desktop (1280 px) and phone (390 px) width; restores desktop light. */
export async function screenshotAll(page: Page, name: string, settle?: () => Promise<void>): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    for (const [label, size] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize(size);
      await settle?.();
      await page.waitForTimeout(120);
      await screenshot(page, `${name}-${label}-${scheme}`);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(DESKTOP);
}

/** A small valid PNG (solid colour, RGB), made here so no binary fixture is needed. */
export function makePng(width: number, height: number, rgb: [number, number, number]): Buffer {
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const o = y * (width * 3 + 1);
    raw[o] = 0;
    for (let x = 0; x < width; x++) {
      // A diagonal stripe, so the image is not just a flat colour.
      const stripe = Math.abs(x - y) < width / 8;
      raw[o + 1 + x * 3] = stripe ? 255 : rgb[0];
      raw[o + 2 + x * 3] = stripe ? 255 : rgb[1];
      raw[o + 3 + x * 3] = stripe ? 255 : rgb[2];
    }
  }
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c >>> 0;
}

/** Picks files (or a folder) through the toolbar's upload button and the browser's file chooser. */
export async function pickFiles(page: Page, button: 'Upload files' | 'Upload folder', files: string | string[]): Promise<void> {
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('toolbar', { name: 'Folder actions' }).getByRole('button', { name: button }).click()]);
  await chooser.setFiles(files);
}

/** Throttles the page's uploads (Chrome DevTools network emulation), so progress can be watched. */
export async function throttleUploads(page: Page, bytesPerSecond: number): Promise<() => Promise<void>> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: bytesPerSecond });
  return async () => {
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await cdp.detach();
  };
}

/**
 * The little of the page's globals that predicates use, for `globalThis as
 * unknown as PageGlobal` (the root tsconfig has no DOM lib). Predicates passed
 * to waitForFunction must be self-contained functions, not strings: the app's
 * Content-Security-Policy forbids eval, which polled string predicates need.
 */
type PageElement = { dataset?: Record<string, string | undefined>; value?: string; complete?: boolean; naturalWidth?: number };
export type PageGlobal = { document: { activeElement: PageElement | null; querySelector(selector: string): PageElement | null } };
