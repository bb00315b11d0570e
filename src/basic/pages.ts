import type { Entry, ListedEntry } from '../storage/backend.js';
import { NONCE_SLOT } from '../http/security-headers.js';
import { formatModified, formatSize } from './format.js';
import { html, type Html, type HtmlValue } from '../http/html.js';
import { pathUrl } from './urls.js';

/**
 * The pages of the no-JavaScript UI, as pure functions of their data. Plain
 * forms, links and one table: they work in lynx and w3m, with labels for
 * every input, and no script anywhere (the CSP forbids it too).
 */

/** Where the basic UI lives: `<base-path>/basic/`. */
export type Site = { readonly root: string };

/** The signed-in user and the CSRF token every form of the page carries. */
export type Viewer = { readonly username: string; readonly csrf: string };

const csrfField = (v: Viewer) => html`<input type="hidden" name="csrf" value="${v.csrf}">`;

export function layout(site: Site, title: string, body: HtmlValue, viewer?: Viewer): Html {
  const signOut = viewer
    ? html`<form class="signout" method="post" action="${site.root}logout">${csrfField(viewer)}<span>Signed in as <strong>${viewer.username}</strong></span> <button type="submit">Sign out</button></form>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title} · File Cloud</title>
<link rel="stylesheet" nonce="${NONCE_SLOT}" href="${site.root}style.css">
</head>
<body>
<header><a class="brand" href="${site.root}">File Cloud</a> <span class="tag">basic HTML version</span>${signOut}</header>
<main>
${body}
</main>
</body>
</html>
`;
}

export function loginPage(site: Site, opts: { error?: string | undefined; notice?: string | undefined; username?: string; next?: string | undefined; sso?: { href: string; label: string } | undefined } = {}): Html {
  return layout(
    site,
    'Sign in',
    html`<h1>Sign in</h1>
${opts.notice ? html`<p class="msg" role="status">${opts.notice}</p>` : ''}
${opts.error ? html`<p class="error" role="alert">${opts.error}</p>` : ''}
${opts.sso ? html`<p><a href="${opts.sso.href}">Sign in with ${opts.sso.label}</a></p>` : ''}
<form method="post" action="${site.root}login">${opts.next ? html`<input type="hidden" name="next" value="${opts.next}">` : ''}
<p><label for="username">Username</label><br><input id="username" name="username" autocomplete="username" required value="${opts.username ?? ''}"></p>
<p><label for="password">Password</label><br><input id="password" name="password" type="password" autocomplete="current-password" required></p>
<p><label for="totp">Code from your authenticator app <span class="small">(only if two-factor sign-in is on)</span></label><br><input id="totp" name="totp" autocomplete="one-time-code"></p>
<p><button type="submit">Sign in</button></p>
</form>
<p class="small">This version works without JavaScript, in text browsers too.</p>`,
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
  return html`<nav class="crumbs" aria-label="Folder path">${crumbs}</nav>`;
}

const query = (name: string, value: string) => `?${name}=${encodeURIComponent(value)}`;

function entryRow(site: Site, segments: readonly string[], e: ListedEntry): Html {
  const path = [...segments, e.name];
  const here = folderUrl(site, segments);
  const link = e.isFile ? html`<a href="${downloadUrl(site, path)}">${e.name}</a>` : html`<a href="${folderUrl(site, path)}">${e.name}/</a>`;
  return html`<tr><td class="kind">${e.isFile ? 'file' : 'folder'}</td><td class="name">${link}</td><td class="size">${e.isFile ? formatSize(e.size) : '-'}</td><td class="date">${formatModified(e.modified)}</td><td class="actions"><a href="${here + query('rename', e.name)}">Rename</a> <a href="${here + query('delete', e.name)}">Delete</a></td></tr>
`;
}

function pager(site: Site, v: FolderView): Html {
  if (v.total <= v.pageSize) return html``;
  const last = Math.ceil(v.total / v.pageSize);
  const here = folderUrl(site, v.segments);
  const first = (v.page - 1) * v.pageSize + 1;
  const end = Math.min(v.total, v.page * v.pageSize);
  return html`<p class="pager">Entries ${first}–${end} of ${v.total}. ${v.page > 1 ? html`<a href="${here}?page=${v.page - 1}" rel="prev">Previous page</a> ` : ''}${v.page < last ? html`<a href="${here}?page=${v.page + 1}" rel="next">Next page</a>` : ''}</p>`;
}

export function folderPage(site: Site, viewer: Viewer, v: FolderView): Html {
  const here = folderUrl(site, v.segments);
  const title = v.segments.length ? (v.segments[v.segments.length - 1] as string) : 'My files';
  const parent = v.segments.length ? html`<tr><td class="kind">up</td><td class="name"><a href="${folderUrl(site, v.segments.slice(0, -1))}">../ (parent folder)</a></td><td></td><td></td><td></td></tr>` : '';
  const rows = v.entries.map((e) => entryRow(site, v.segments, e));
  return layout(
    site,
    title,
    html`${breadcrumb(site, viewer, v.segments)}
<h1>${title}</h1>
${v.notice ? html`<p class="msg" role="status">${v.notice}</p>` : ''}
<div class="forms">
<form method="post" action="${here}?action=upload&amp;csrf=${encodeURIComponent(viewer.csrf)}" enctype="multipart/form-data">
<label for="files">Upload files</label> <input id="files" name="files" type="file" multiple required> <button type="submit">Upload</button>
</form>
<form method="post" action="${here}">${csrfField(viewer)}<input type="hidden" name="action" value="mkdir">
<label for="folder-name">New folder</label> <input id="folder-name" name="name" required> <button type="submit">Create folder</button>
</form>
</div>
${pager(site, v)}
<table>
<caption>${v.total === 0 ? 'This folder is empty.' : `${v.total} ${v.total === 1 ? 'entry' : 'entries'}`}</caption>
<thead><tr><th scope="col">Kind</th><th scope="col">Name</th><th scope="col">Size</th><th scope="col">Modified</th><th scope="col">Actions</th></tr></thead>
<tbody>
${parent}${rows}</tbody>
</table>
${pager(site, v)}`,
    viewer,
  );
}

export function renamePage(site: Site, viewer: Viewer, segments: readonly string[], entry: Entry): Html {
  const here = folderUrl(site, segments);
  return layout(
    site,
    `Rename ${entry.name}`,
    html`${breadcrumb(site, viewer, segments)}
<h1>Rename ${entry.isFile ? 'file' : 'folder'} “${entry.name}”</h1>
<form method="post" action="${here}">${csrfField(viewer)}<input type="hidden" name="action" value="rename"><input type="hidden" name="name" value="${entry.name}">
<p><label for="new-name">New name</label><br><input id="new-name" name="new_name" required value="${entry.name}"></p>
<p><button type="submit">Rename</button> <a href="${here}">Cancel</a></p>
</form>`,
    viewer,
  );
}

export function deletePage(site: Site, viewer: Viewer, segments: readonly string[], entry: Entry): Html {
  const here = folderUrl(site, segments);
  return layout(
    site,
    `Delete ${entry.name}`,
    html`${breadcrumb(site, viewer, segments)}
<h1>Delete ${entry.isFile ? 'file' : 'folder'} “${entry.name}”?</h1>
<p>${entry.isFile ? `This deletes the file (${formatSize(entry.size)}).` : 'This deletes the folder and everything in it.'} It cannot be undone.</p>
<form method="post" action="${here}">${csrfField(viewer)}<input type="hidden" name="action" value="delete"><input type="hidden" name="name" value="${entry.name}">
<p><button type="submit" class="danger">Delete</button> <a href="${here}">Cancel</a></p>
</form>`,
    viewer,
  );
}

const TITLES: Record<number, string> = {
  400: 'Bad request',
  403: 'Refused',
  404: 'Not found',
  409: 'Conflict',
  413: 'Too large',
  416: 'Range not satisfiable',
  429: 'Too many attempts',
  500: 'Server error',
  503: 'Unavailable',
  507: 'Storage full',
};

export function errorPage(site: Site, status: number, message: string, opts: { back?: string | undefined; viewer?: Viewer | undefined } = {}): Html {
  const title = TITLES[status] ?? (status >= 500 ? 'Server error' : 'Error');
  return layout(
    site,
    title,
    html`<h1>${title}</h1>
<p class="error" role="alert">${message}</p>
<p>${opts.back ? html`<a href="${opts.back}">Back to the folder</a> · ` : ''}<a href="${site.root}">Your files</a></p>`,
    opts.viewer,
  );
}
