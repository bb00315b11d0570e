import { SaxesParser } from 'saxes';

/**
 * XML of WebDAV request bodies (PROPFIND, PROPPATCH, LOCK). Parsed with
 * namespaces, as RFC 4918 §8.3 requires; a DOCTYPE is refused outright, so
 * no entity is ever declared or expanded (no XXE, no billion laughs), and
 * nesting and element count are capped so a small body cannot build a huge tree.
 */
export class DavXmlError extends Error {}

export type XmlAttr = { readonly ns: string; readonly local: string; readonly value: string };

export type XmlElement = {
  /** Namespace URI; '' for none. */
  readonly ns: string;
  readonly local: string;
  /** Attributes other than namespace declarations. */
  readonly attrs: readonly XmlAttr[];
  readonly children: readonly XmlElement[];
  /** The element's own text (not its children's), concatenated. */
  readonly text: string;
  /** Children and text in document order, to write the element back faithfully. */
  readonly content: readonly (XmlElement | string)[];
};

export const MAX_DEPTH = 64;
export const MAX_ELEMENTS = 10_000;

const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const XMLNS_NS = 'http://www.w3.org/2000/xmlns/';

type Building = { ns: string; local: string; attrs: XmlAttr[]; children: XmlElement[]; text: string; content: (XmlElement | string)[] };

export function parseXml(input: string): XmlElement {
  const parser = new SaxesParser({ xmlns: true });
  const stack: Building[] = [];
  let root: Building | undefined;
  let count = 0;
  let failure: Error | undefined;
  const fail = (message: string) => {
    failure ??= new DavXmlError(message);
    throw failure;
  };
  parser.on('error', (e) => fail(e.message.replace(/^undefined:/, '').trim()));
  parser.on('doctype', () => fail('a DOCTYPE is not accepted'));
  parser.on('opentag', (tag) => {
    if (stack.length >= MAX_DEPTH) fail(`elements may nest at most ${MAX_DEPTH} deep`);
    if (++count > MAX_ELEMENTS) fail(`at most ${MAX_ELEMENTS} elements are accepted`);
    const attrs: XmlAttr[] = [];
    for (const a of Object.values(tag.attributes)) {
      if (a.name === 'xmlns' || a.prefix === 'xmlns') continue;
      attrs.push({ ns: a.uri ?? '', local: a.local, value: a.value });
    }
    const el: Building = { ns: tag.uri ?? '', local: tag.local ?? tag.name, attrs, children: [], text: '', content: [] };
    const parent = stack.at(-1);
    if (parent) {
      parent.children.push(el);
      parent.content.push(el);
    } else {
      root = el;
    }
    stack.push(el);
  });
  parser.on('closetag', () => void stack.pop());
  const onText = (t: string) => {
    const top = stack.at(-1);
    if (!top) return; // whitespace around the root; saxes refuses anything else there
    top.text += t;
    const last = top.content.length - 1;
    if (typeof top.content[last] === 'string') top.content[last] += t;
    else top.content.push(t);
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  try {
    parser.write(input.replace(/^\uFEFF/, '')).close();
  } catch (e) {
    if (e instanceof DavXmlError) throw e;
    throw new DavXmlError(e instanceof Error ? e.message : String(e));
  }
  if (failure) throw failure;
  if (!root) throw new DavXmlError('there is no root element');
  return root;
}

/** True when a body holds no XML at all (empty, whitespace, or a lone byte-order mark). */
export const isEmptyBody = (text: string): boolean => text.replace(/^\uFEFF/, '').trim() === '';

const NEEDS_ESCAPE = /[&<>\r]/;
// Most names and values need no escaping: test once instead of four replaces (PROPFIND of big folders).
export const escapeText = (s: string): string => (NEEDS_ESCAPE.test(s) ? s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#13;') : s);

/** Also escapes tab and line ends, which a parser would otherwise turn into spaces (attribute value normalisation). */
export const escapeAttr = (s: string): string =>
  escapeText(s).replace(/"/g, '&quot;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;');

export const child = (el: XmlElement, ns: string, local: string): XmlElement | undefined => el.children.find((c) => c.ns === ns && c.local === local);

export const children = (el: XmlElement, ns: string, local: string): XmlElement[] => el.children.filter((c) => c.ns === ns && c.local === local);

/**
 * One element as self-contained XML, to be stored (a dead property, a lock
 * owner) and later embedded in a response whatever its prefixes are: the
 * element declares its namespace as the default one (`xmlns=""` for none),
 * so it never depends on or clashes with the surrounding document's
 * prefixes; namespaced attributes get prefixes declared on their element.
 */
/**
 * A multistatus streamed in pieces of about `size` characters: `head`, each item of each page
 * rendered, `tail`; a big folder's answer never sits in memory whole.
 */
export async function* inBatches<T>(head: string, pages: AsyncIterable<readonly T[]>, render: (item: T) => string, tail: string, size = 64 * 1024): AsyncGenerator<string> {
  let batch = head;
  for await (const page of pages) {
    for (const item of page) {
      batch += render(item);
      if (batch.length >= size) {
        yield batch;
        batch = '';
      }
    }
  }
  yield batch + tail;
}

export function serializeElement(el: XmlElement): string {
  return write(el, undefined);
}

function write(el: XmlElement, inheritedNs: string | undefined): string {
  let out = `<${el.local}`;
  if (el.ns !== inheritedNs) out += ` xmlns="${escapeAttr(el.ns)}"`;
  const prefixes = new Map<string, string>();
  let attrs = '';
  for (const a of el.attrs) {
    if (a.ns === '') {
      attrs += ` ${a.local}="${escapeAttr(a.value)}"`;
    } else if (a.ns === XML_NS) {
      attrs += ` xml:${a.local}="${escapeAttr(a.value)}"`;
    } else if (a.ns !== XMLNS_NS) {
      let p = prefixes.get(a.ns);
      if (!p) {
        p = `a${prefixes.size}`;
        prefixes.set(a.ns, p);
        out += ` xmlns:${p}="${escapeAttr(a.ns)}"`;
      }
      attrs += ` ${p}:${a.local}="${escapeAttr(a.value)}"`;
    }
  }
  out += attrs;
  if (el.content.length === 0) return `${out}/>`;
  out += '>';
  for (const c of el.content) out += typeof c === 'string' ? escapeText(c) : write(c, el.ns);
  return `${out}</${el.local}>`;
}
