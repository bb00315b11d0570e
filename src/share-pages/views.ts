import { thumbnailSource } from '../thumbnails/sizes.js';
import { NONCE_SLOT } from '../http/security-headers.js';
import { contentTypeFor } from '../lib/mime.js';
import { Html, html } from '../http/html.js';
import { urlPath } from './urls.js';
import { formatBytes } from '../lib/i18n/format.js';
import type { Locale } from '../lib/i18n/negotiate.js';
import { uiFor, type Ui } from '../lib/i18n/ui.js';

/** Small inline icons (no font or image request; fixed markup, nothing interpolated). */
const ICONS = {
  folder: new Html('<svg class="icon" viewBox="0 0 24 24" aria-hidden="true"><path fill="#e3a21a" d="M2 6a2 2 0 0 1 2-2h5l2 2h9a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2z"/></svg>'),
  file: new Html('<svg class="icon" viewBox="0 0 24 24" aria-hidden="true"><path fill="#8a94a6" d="M6 2h8l6 6v12a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2z"/><path fill="#d5dae3" d="M14 2v6h6z"/></svg>'),
  image: new Html('<svg class="icon" viewBox="0 0 24 24" aria-hidden="true"><rect x="2" y="4" width="20" height="16" rx="2" fill="#4f8be8"/><circle cx="8" cy="9" r="2" fill="#fff"/><path fill="#cfe0ff" d="M4 18l5-6 4 4 3-3 4 5z"/></svg>'),
};

/**
 * The public pages of share links (/s/<id>), rendered on the server so they
 * work without JavaScript; share.js only enhances them. Every value from a
 * share (names, sizes) goes through html``, which escapes it.
 */

export type PreviewKind = 'image' | 'video' | 'audio' | 'text' | 'pdf';

/** What kind of inline preview a file gets, from its name's type (undefined: none). */
export function previewKind(name: string): PreviewKind | undefined {
  const type = contentTypeFor(name).split(';')[0] as string;
  if (type.startsWith('image/')) return 'image';
  if (type.startsWith('video/')) return 'video';
  if (type.startsWith('audio/')) return 'audio';
  if (type === 'application/pdf') return 'pdf';
  if (type.startsWith('text/') || type === 'application/json' || type === 'application/xml') return 'text';
  return undefined;
}

export const formatSize = (bytes: number, locale: Locale = 'en'): string => formatBytes(bytes, locale);

/** Where a page's links point (the base path, and the two URL roots of one share), and the language it speaks (English when not given). */
export type PageUrls = { readonly base: string; readonly id: string; readonly ui?: Ui };
const uiOf = (u: { ui?: Ui }): Ui => u.ui ?? uiFor('en');
const pageRoot = (u: PageUrls) => `${u.base}/s/${u.id}`;
const apiRoot = (u: PageUrls) => `${u.base}/share/${u.id}`;

function layout(u: { base: string; ui?: Ui }, title: string, body: Html, opts: { bodyClass?: string } = {}): string {
  const { t, locale } = uiOf(u);
  return html`<!doctype html>
<html lang="${locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="icon" href="${u.base}/s/_assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" nonce="${NONCE_SLOT}" href="${u.base}/s/_assets/share.css">
<script nonce="${NONCE_SLOT}" src="${u.base}/s/_assets/share.js" defer></script>
</head>
<body class="${opts.bodyClass ?? ''}" data-messages="${JSON.stringify(scriptMessages(t))}">
<main>
${body}
</main>
<footer>${t('share.footer')}</footer>
</body>
</html>
`.value;
}

/** What share.js says, in the page's language (it has no catalog of its own). */
function scriptMessages(t: Ui['t']): Record<string, string> {
  return {
    chooseFiles: t('share.chooseFiles'),
    uploading: t('share.js.uploading'),
    uploadedOne: t('share.js.uploadedOne'),
    uploadedMany: t('share.js.uploadedMany', { n: '{n}' }),
    uploadFailed: t('share.js.uploadFailed', { status: '{status}' }),
    connectionLost: t('share.js.connectionLost'),
    pdfTitle: t('share.js.pdfTitle'),
    pdfHintBefore: t('share.js.pdfHintBefore'),
    pdfHintLink: t('share.js.pdfHintLink'),
    pdfHintAfter: t('share.js.pdfHintAfter'),
    imageViewer: t('share.js.imageViewer'),
    previousImage: t('share.js.previousImage'),
    nextImage: t('share.js.nextImage'),
    close: t('share.js.close'),
  };
}

/** The one page of every dead link: unknown, expired, revoked, used up, target gone. */
export function deadLinkPage(base: string, ui?: Ui): string {
  const { t } = uiOf({ ui });
  return layout({ base, ui }, t('share.deadTitle'), html`<h1>${t('share.deadHeading')}</h1>
<p class="note">${t('share.deadNote')}</p>`);
}

/** A path below a live share that holds nothing. */
export function notInSharePage(u: PageUrls): string {
  const { t } = uiOf(u);
  return layout(u, t('share.notFound'), html`<h1>${t('share.notFound')}</h1><p class="note">${t('share.notInShare')}</p><p><a href="${pageRoot(u)}/">${t('share.backToStart')}</a></p>`);
}

export function messagePage(base: string, title: string, message: string, ui?: Ui): string {
  return layout({ base, ui }, title, html`<h1>${title}</h1><p class="note">${message}</p>`);
}

export function passwordPage(u: PageUrls, opts: { error?: string } = {}): string {
  const { t } = uiOf(u);
  return layout(
    u,
    t('share.passwordTitle'),
    html`<h1>${t('share.passwordHeading')}</h1>
<p class="note">${t('share.passwordNote')}</p>
${opts.error ? html`<p class="error" role="alert">${opts.error}</p>` : ''}
<form method="post" action="${pageRoot(u)}/auth" class="password">
<label for="password">${t('share.password')}</label>
<input id="password" name="password" type="password" required autofocus autocomplete="current-password">
<button type="submit">${t('share.open')}</button>
</form>`,
  );
}

function breadcrumb(u: PageUrls, rootName: string, segments: readonly string[]): Html {
  const crumbs = [html`<a href="${pageRoot(u)}/">${rootName}</a>`];
  segments.forEach((s, i) => {
    const last = i === segments.length - 1;
    crumbs.push(last ? html`<span aria-current="page">${s}</span>` : html`<a href="${urlPath(pageRoot(u), segments.slice(0, i + 1), true)}">${s}</a>`);
  });
  return html`<nav class="crumbs" aria-label="${uiOf(u).t('share.location')}">${crumbs.map((c, i) => (i === 0 ? c : html`<span class="sep">/</span>${c}`))}</nav>`;
}

export type FilePageInput = {
  readonly urls: PageUrls;
  readonly rootName: string;
  /** Below the share's root; [] for a file share. */
  readonly segments: readonly string[];
  readonly name: string;
  readonly size: number;
  /** Preview off (a download limit: every view would count). */
  readonly preview: boolean;
  /** The first bytes of a text file, shown without JavaScript. */
  readonly text?: { readonly content: string; readonly truncated: boolean };
};

export function filePage(p: FilePageInput): string {
  const { t, locale } = uiOf(p.urls);
  const raw = urlPath(apiRoot(p.urls), p.segments);
  const kind = p.preview ? previewKind(p.name) : undefined;
  let preview: Html | string = '';
  if (kind === 'image') preview = html`<figure class="preview"><img src="${raw}" alt="${p.name}"></figure>`;
  else if (kind === 'video') preview = html`<figure class="preview"><video src="${raw}" controls preload="metadata"></video></figure>`;
  else if (kind === 'audio') preview = html`<figure class="preview"><audio src="${raw}" controls preload="metadata"></audio></figure>`;
  else if (kind === 'pdf') preview = html`<figure class="preview pdf" data-pdf="${raw}"><p class="note">${t('share.pdfNote')}</p></figure>`;
  else if (kind === 'text' && p.text) {
    preview = html`<figure class="preview"><pre class="text">${p.text.content}</pre>${p.text.truncated ? html`<figcaption class="note">${t('share.textTruncated')}</figcaption>` : ''}</figure>`;
  }
  return layout(
    p.urls,
    p.name,
    html`${p.segments.length > 0 ? breadcrumb(p.urls, p.rootName, p.segments) : ''}
<section class="file">
<h1 class="name">${p.name}</h1>
<p class="size">${formatSize(p.size, locale)}</p>
<p><a class="button primary" href="${raw}?download=1" download>${t('share.download')}</a></p>
${!p.preview ? html`<p class="note">${t('share.noPreview')}</p>` : ''}
</section>
${preview}`,
  );
}

export type FolderEntry = { readonly name: string; readonly isFile: boolean; readonly size: number; readonly modified: Date };

/** Entries on one folder page: a visitor's request holds this many at most. */
export const SHARE_PAGE_SIZE = 200;

export type FolderPageInput = {
  readonly urls: PageUrls;
  readonly rootName: string;
  readonly segments: readonly string[];
  /** This page's entries (at most SHARE_PAGE_SIZE). */
  readonly entries: readonly FolderEntry[];
  readonly preview: boolean;
  /** Which page this is, and whether one follows (the total is never counted: that would read the whole folder). */
  readonly page?: { readonly number: number; readonly hasNext: boolean };
};

/** Previous and next as plain links (no JavaScript needed); nothing for a folder of one page. */
function pager(ui: Ui, here: string, page: FolderPageInput['page']): Html | string {
  if (!page || (page.number === 1 && !page.hasNext)) return '';
  const { t } = ui;
  const first = (page.number - 1) * SHARE_PAGE_SIZE + 1;
  return html`<nav class="pager" aria-label="${t('share.pages')}"><span class="note">${t('share.pageOf', { page: page.number, first })}</span> ${page.number > 1 ? html`<a class="button" href="${here}?page=${String(page.number - 1)}" rel="prev">${t('share.previousPage')}</a> ` : ''}${page.hasNext ? html`<a class="button" href="${here}?page=${String(page.number + 1)}" rel="next">${t('share.nextPage')}</a>` : ''}</nav>`;
}

export function folderPage(p: FolderPageInput): string {
  const ui = uiOf(p.urls);
  const { t, locale } = ui;
  const here = p.segments;
  const title = here.length === 0 ? p.rootName : (here[here.length - 1] as string);
  const rows = p.entries.map((e) => {
    const segs = [...here, e.name];
    if (!e.isFile) {
      return html`<li class="entry folder"><a class="open" href="${urlPath(pageRoot(p.urls), segs, true)}">${ICONS.folder}<span class="ename">${e.name}</span></a><span class="meta">${t('share.folder')}</span></li>`;
    }
    const raw = urlPath(apiRoot(p.urls), segs);
    const image = p.preview && previewKind(e.name) === 'image';
    // Images the server draws show their thumbnail, and the gallery shows 1024 px ones rather than the originals.
    const source = p.preview ? thumbnailSource(e.name) : undefined;
    const drawn = image && source === 'image';
    const thumb = html`<img class="thumb" src="${raw}?thumbnail=64" alt="" loading="lazy" decoding="async" width="44" height="44">`;
    // A PDF's first page or a video's frame lies over the file icon; share.js removes the image when
    // the server cannot draw it (a broken file, no poppler or ffmpeg), so the icon shows.
    const media = source === 'pdf' || source === 'video';
    const picture = drawn ? thumb : media ? html`<span class="pic">${ICONS.file}${thumb}</span>` : image ? ICONS.image : ICONS.file;
    return html`<li class="entry file${image ? ' image' : ''}"><a class="open" href="${urlPath(pageRoot(p.urls), segs)}"${image ? html` data-gallery="${drawn ? `${raw}?thumbnail=1024` : raw}"` : ''}>${picture}<span class="ename">${e.name}</span></a><span class="meta">${formatSize(e.size, locale)}</span><a class="dl" href="${raw}?download=1" download aria-label="${t('share.downloadName', { name: e.name })}">${t('share.download')}</a></li>`;
  });
  const zip = `${urlPath(apiRoot(p.urls), here, true)}?zip=1`;
  return layout(
    p.urls,
    title,
    html`${breadcrumb(p.urls, p.rootName, here)}
<h1 class="name">${title}</h1>
<p class="actions"><a class="button primary" href="${zip}" download>${t('share.downloadAll')}</a></p>
${p.entries.length === 0 ? html`<p class="note">${t('share.emptyFolder')}</p>` : html`<ul class="listing">${rows}</ul>`}
${pager(ui, urlPath(pageRoot(p.urls), here, true), p.page)}`,
  );
}

export type UploadPageInput = {
  readonly urls: PageUrls;
  readonly rootName: string;
  readonly segments: readonly string[];
  readonly message?: string;
  readonly error?: string;
};

/** An upload-only link: a drop zone that is a plain multipart form without JavaScript. */
export function uploadPage(p: UploadPageInput): string {
  const action = urlPath(pageRoot(p.urls), p.segments, true);
  const put = urlPath(apiRoot(p.urls), p.segments, true);
  const { t } = uiOf(p.urls);
  const [before, after] = t('share.uploadHeading', { name: '\u0000' }).split('\u0000');
  return layout(
    p.urls,
    t('share.uploadTitle', { name: p.rootName }),
    html`<h1>${before}<span class="name">${p.rootName}</span>${after}</h1>
<p class="note">${t('share.uploadNote')}</p>
${p.message ? html`<p class="ok" role="status">${p.message}</p>` : ''}
${p.error ? html`<p class="error" role="alert">${p.error}</p>` : ''}
<form class="upload" method="post" action="${action}" enctype="multipart/form-data" data-put="${put}">
<div class="dropzone"><label class="big" for="files">${t('share.chooseFiles')}</label><span class="hint">${t('share.orDrop')}</span>
<input id="files" name="file" type="file" multiple required></div>
<button type="submit">${t('share.upload')}</button>
<div class="progress" hidden><progress max="100" value="0"></progress><span class="status" role="status"></span></div>
</form>
<section class="received" hidden><h2>${t('share.sentHeading')}</h2><ul aria-label="${t('share.received')}"></ul></section>`,
    { bodyClass: 'upload-only' },
  );
}
