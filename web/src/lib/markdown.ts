import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';

/**
 * Markdown for previews: CommonMark plus GitHub's extensions (tables,
 * strikethrough, task lists, autolinks, footnotes) by micromark, which is
 * spec-compliant and safe by default: HTML in the file is escaped (shown as
 * text), and links with other than http(s), mailto or relative URLs lose their
 * href. On top of that, images are replaced by their text (a file must not
 * make the browser fetch a tracker from elsewhere, and the app's CSP would
 * block it anyway) and links open in a new tab without an opener.
 * The result is a DocumentFragment built by the browser's parser from the
 * escaped HTML, never inserted as HTML into the page.
 */
export function renderMarkdown(source: string): DocumentFragment {
  const html = micromark(source, { extensions: [gfm()], htmlExtensions: [gfmHtml()] });
  const template = document.createElement('template');
  template.innerHTML = html;
  const out = template.content;
  for (const img of Array.from(out.querySelectorAll('img'))) img.replaceWith(document.createTextNode(img.getAttribute('alt') ?? ''));
  for (const a of Array.from(out.querySelectorAll('a'))) {
    const href = a.getAttribute('href') ?? '';
    // In-page anchors (footnotes) stay; everything else leaves the app in a new tab.
    if (href.startsWith('#')) continue;
    if (!/^(https?:|mailto:)/i.test(href)) {
      // A relative link would resolve against the app's own address, not the file's folder: plain text.
      a.replaceWith(...Array.from(a.childNodes));
      continue;
    }
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
  }
  return out;
}
