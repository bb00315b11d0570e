import type { Entry, ListedEntry } from '../storage/backend.js';
import { NONCE_SLOT } from '../http/security-headers.js';
import { formatModified, formatSize } from './format.js';
import type { Ui } from '../lib/i18n/ui.js';
import type { MessageKey } from '../lib/i18n/catalogs.js';
import { html, type Html, type HtmlValue } from '../http/html.js';
import { pathUrl } from './urls.js';

/**
 * The pages of the no-JavaScript UI, as pure functions of their data. Plain
 * forms, links and one table: they work in lynx and w3m, with labels for
 * every input, and no script anywhere (the CSP forbids it too).
 */

/** Where the basic UI lives (`<base-path>/basic/`), and the language its pages speak. */
export type Site = { readonly root: string; readonly ui: Ui };

/** The signed-in user and the CSRF token every form of the page carries. */
export type Viewer = { readonly username: string; readonly csrf: string };

const csrfField = (v: Viewer) => html`<input type="hidden" name="csrf" value="${v.csrf}">`;

export function layout(site: Site, title: string, body: HtmlValue, viewer?: Viewer): Html {
  const { t } = site.ui;
  const [before, after] = t('basic.signedInAs', { user: '\u0000' }).split('\u0000');
  const signOut = viewer
    ? html`<form class="signout" method="post" action="${site.root}logout">${csrfField(viewer)}<span>${before}<strong>${viewer.username}</strong>${after}</span> <button type="submit">${t('basic.signOut')}</button></form>`
    : '';
  return html`<!doctype html>
<html lang="${site.ui.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title} · File Cloud</title>
<link rel="stylesheet" nonce="${NONCE_SLOT}" href="${site.root}style.css">
<link rel="icon" href="${site.root}icon.svg" type="image/svg+xml">
</head>
<body>
<header><a class="brand" href="${site.root}">File Cloud</a> <span class="tag">${t('basic.tag')}</span>${signOut}</header>
<main>
${body}
</main>
</body>
</html>
`;
}

export function loginPage(site: Site, opts: { error?: string | undefined; notice?: string | undefined; username?: string; next?: string | undefined; sso?: { href: string; label: string } | undefined } = {}): Html {
  const { t } = site.ui;
  return layout(
    site,
    t('basic.signIn'),
    html`<h1>${t('basic.signIn')}</h1>
${opts.notice ? html`<p class="msg" role="status">${opts.notice}</p>` : ''}
${opts.error ? html`<p class="error" role="alert">${opts.error}</p>` : ''}
${opts.sso ? html`<p><a href="${opts.sso.href}">${t('basic.signInWith', { provider: opts.sso.label })}</a></p>` : ''}
<form method="post" action="${site.root}login">${opts.next ? html`<input type="hidden" name="next" value="${opts.next}">` : ''}
<p><label for="username">${t('basic.username')}</label><br><input id="username" name="username" autocomplete="username" required value="${opts.username ?? ''}"></p>
<p><label for="password">${t('basic.password')}</label><br><input id="password" name="password" type="password" autocomplete="current-password" required></p>
<p><label for="totp">${t('basic.totpCode')} <span class="small">${t('basic.totpHint')}</span></label><br><input id="totp" name="totp" autocomplete="one-time-code"></p>
<p><button type="submit">${t('basic.signIn')}</button></p>
</form>
<p class="small">${t('basic.noScript')}</p>`,
  );
}

export type FolderView = {
  /** Segments of the folder below the user's root. */
  readonly segments: readonly string[];
  /** The entries of this page, already sorted (folders first, then by name). */
  readonly entries: readonly ListedEntry[];
  readonly total: number;
  readonly page: number;
  readonly pageSize: number;
  readonly notice?: string | undefined;
};

const folderUrl = (site: Site, segments: readonly string[]) => pathUrl(site.root, segments, true);
const downloadUrl = (site: Site, segments: readonly string[]) => pathUrl(`${site.root}file/`, segments, false);

function breadcrumb(site: Site, viewer: Viewer, segments: readonly string[]): Html {
  const crumbs: Html[] = [html`<a href="${folderUrl(site, [])}">${viewer.username}</a>`];
  segments.forEach((s, i) => {
    crumbs.push(i === segments.length - 1 ? html` / <span aria-current="page">${s}</span>` : html` / <a href="${folderUrl(site, segments.slice(0, i + 1))}">${s}</a>`);
  });
  return html`<nav class="crumbs" aria-label="${site.ui.t('basic.folderPath')}">${crumbs}</nav>`;
}

const query = (name: string, value: string) => `?${name}=${encodeURIComponent(value)}`;

function entryRow(site: Site, segments: readonly string[], e: ListedEntry): Html {
  const path = [...segments, e.name];
  const here = folderUrl(site, segments);
  const { t, locale } = site.ui;
  const link = e.isFile ? html`<a href="${downloadUrl(site, path)}">${e.name}</a>` : html`<a href="${folderUrl(site, path)}">${e.name}/</a>`;
  return html`<tr><td class="kind">${e.isFile ? t('basic.kindFile') : t('basic.kindFolder')}</td><td class="name">${link}</td><td class="size">${e.isFile ? formatSize(e.size, locale) : '-'}</td><td class="date">${formatModified(e.modified, locale)}</td><td class="actions"><a href="${here + query('rename', e.name)}">${t('basic.rename')}</a> <a href="${here + query('delete', e.name)}">${t('basic.delete')}</a></td></tr>
`;
}

function pager(site: Site, v: FolderView): Html {
  if (v.total <= v.pageSize) return html``;
  const last = Math.ceil(v.total / v.pageSize);
  const here = folderUrl(site, v.segments);
  const first = (v.page - 1) * v.pageSize + 1;
  const end = Math.min(v.total, v.page * v.pageSize);
  const { t } = site.ui;
  return html`<p class="pager">${t('basic.entriesRange', { first, end, total: v.total })} ${v.page > 1 ? html`<a href="${here}?page=${v.page - 1}" rel="prev">${t('basic.previousPage')}</a> ` : ''}${v.page < last ? html`<a href="${here}?page=${v.page + 1}" rel="next">${t('basic.nextPage')}</a>` : ''}</p>`;
}

export function folderPage(site: Site, viewer: Viewer, v: FolderView): Html {
  const { t } = site.ui;
  const here = folderUrl(site, v.segments);
  const title = v.segments.length ? (v.segments[v.segments.length - 1] as string) : t('basic.myFiles');
  const parent = v.segments.length ? html`<tr><td class="kind">${t('basic.kindUp')}</td><td class="name"><a href="${folderUrl(site, v.segments.slice(0, -1))}">../ ${t('basic.parentFolder')}</a></td><td></td><td></td><td></td></tr>` : '';
  const rows = v.entries.map((e) => entryRow(site, v.segments, e));
  return layout(
    site,
    title,
    html`${breadcrumb(site, viewer, v.segments)}
<h1>${title}</h1>
${v.notice ? html`<p class="msg" role="status">${v.notice}</p>` : ''}
<div class="forms">
<form method="post" action="${here}?action=upload&amp;csrf=${encodeURIComponent(viewer.csrf)}" enctype="multipart/form-data">
<label for="files">${t('basic.uploadFiles')}</label> <input id="files" name="files" type="file" multiple required> <button type="submit">${t('basic.upload')}</button>
</form>
<form method="post" action="${here}">${csrfField(viewer)}<input type="hidden" name="action" value="mkdir">
<label for="folder-name">${t('basic.newFolder')}</label> <input id="folder-name" name="name" required> <button type="submit">${t('basic.createFolder')}</button>
</form>
</div>
${pager(site, v)}
<table>
<caption>${v.total === 0 ? t('basic.emptyFolder') : t('basic.entryCount', { count: v.total })}</caption>
<thead><tr><th scope="col">${t('basic.colKind')}</th><th scope="col">${t('basic.colName')}</th><th scope="col">${t('basic.colSize')}</th><th scope="col">${t('basic.colModified')}</th><th scope="col">${t('basic.colActions')}</th></tr></thead>
<tbody>
${parent}${rows}</tbody>
</table>
${pager(site, v)}`,
    viewer,
  );
}

export function renamePage(site: Site, viewer: Viewer, segments: readonly string[], entry: Entry): Html {
  const { t } = site.ui;
  const here = folderUrl(site, segments);
  return layout(
    site,
    t('basic.renameTitle', { name: entry.name }),
    html`${breadcrumb(site, viewer, segments)}
<h1>${t('basic.renameHeading', { kind: entry.isFile ? 'file' : 'folder', name: entry.name })}</h1>
<form method="post" action="${here}">${csrfField(viewer)}<input type="hidden" name="action" value="rename"><input type="hidden" name="name" value="${entry.name}">
<p><label for="new-name">${t('basic.newName')}</label><br><input id="new-name" name="new_name" required value="${entry.name}"></p>
<p><button type="submit">${t('basic.rename')}</button> <a href="${here}">${t('basic.cancel')}</a></p>
</form>`,
    viewer,
  );
}

export function deletePage(site: Site, viewer: Viewer, segments: readonly string[], entry: Entry): Html {
  const { t, locale } = site.ui;
  const here = folderUrl(site, segments);
  return layout(
    site,
    t('basic.deleteTitle', { name: entry.name }),
    html`${breadcrumb(site, viewer, segments)}
<h1>${t('basic.deleteHeading', { kind: entry.isFile ? 'file' : 'folder', name: entry.name })}</h1>
<p>${entry.isFile ? t('basic.deletesFile', { size: formatSize(entry.size, locale) }) : t('basic.deletesFolder')} ${t('basic.cannotUndo')}</p>
<form method="post" action="${here}">${csrfField(viewer)}<input type="hidden" name="action" value="delete"><input type="hidden" name="name" value="${entry.name}">
<p><button type="submit" class="danger">${t('basic.delete')}</button> <a href="${here}">${t('basic.cancel')}</a></p>
</form>`,
    viewer,
  );
}

const TITLES: Record<number, MessageKey> = {
  400: 'basic.error400',
  403: 'basic.error403',
  404: 'basic.error404',
  409: 'basic.error409',
  413: 'basic.error413',
  416: 'basic.error416',
  429: 'basic.error429',
  500: 'basic.error500',
  503: 'basic.error503',
  507: 'basic.error507',
};

export function errorPage(site: Site, status: number, message: string, opts: { back?: string | undefined; viewer?: Viewer | undefined } = {}): Html {
  const { t } = site.ui;
  const title = t(TITLES[status] ?? (status >= 500 ? 'basic.error500' : 'basic.error'));
  return layout(
    site,
    title,
    html`<h1>${title}</h1>
<p class="error" role="alert">${message}</p>
<p>${opts.back ? html`<a href="${opts.back}">${t('basic.backToFolder')}</a> · ` : ''}<a href="${site.root}">${t('basic.yourFiles')}</a></p>`,
    opts.viewer,
  );
}
