import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DavXmlError, escapeAttr, escapeText, isEmptyBody, MAX_DEPTH, MAX_ELEMENTS, parseXml, serializeElement, child, children, type XmlElement } from './xml.js';

/** The parts of an element a round trip must keep. */
const shape = (el: XmlElement): unknown => ({ ns: el.ns, local: el.local, attrs: el.attrs, content: el.content.map((c) => (typeof c === 'string' ? c : shape(c))) });

test('parses namespaces: prefixes, default namespace, undeclared default, attributes', () => {
  const root = parseXml('<?xml version="1.0" encoding="utf-8"?>\n<D:propfind xmlns:D="DAV:" xmlns="urn:z"><D:prop><x a="1" D:b="2"/><y xmlns="">t</y></D:prop></D:propfind>');
  assert.equal(root.ns, 'DAV:');
  assert.equal(root.local, 'propfind');
  const prop = child(root, 'DAV:', 'prop');
  assert.ok(prop);
  assert.deepEqual(prop.children.map((c) => [c.ns, c.local]), [['urn:z', 'x'], ['', 'y']]);
  assert.deepEqual(prop.children[0]?.attrs, [{ ns: '', local: 'a', value: '1' }, { ns: 'DAV:', local: 'b', value: '2' }]);
  assert.equal(prop.children[1]?.text, 't');
  assert.equal(children(root, 'DAV:', 'prop').length, 1);
  assert.equal(child(root, 'urn:z', 'prop'), undefined);
});

test('keeps mixed content in order, with CDATA and character references', () => {
  const el = parseXml('<a xmlns="urn:a">one<b/>two<![CDATA[<&>]]>&amp;&#x1F600;</a>');
  assert.deepEqual(el.content.map((c) => (typeof c === 'string' ? c : c.local)), ['one', 'b', 'two<&>&\u{1F600}']);
  assert.equal(el.text, 'onetwo<&>&\u{1F600}');
});

test('refuses a DOCTYPE, undefined entities and malformed XML', () => {
  const bad: [string, string][] = [
    ['billion laughs', '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><D:propfind xmlns:D="DAV:">&b;</D:propfind>'],
    ['external entity (XXE)', '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY x SYSTEM "file:///etc/passwd">]><D:propfind xmlns:D="DAV:"><D:prop>&x;</D:prop></D:propfind>'],
    ['plain DOCTYPE', '<!DOCTYPE propfind><propfind xmlns="DAV:"/>'],
    ['undefined entity', '<a>&nope;</a>'],
    ['unclosed', '<a><b></a>'],
    ['undeclared prefix', '<x:a/>'],
    ['two roots', '<a/><b/>'],
    ['text outside the root', '<a/>junk'],
    ['no root', '<?xml version="1.0"?>'],
    ['not XML', '{"json": true}'],
  ];
  for (const [name, text] of bad) assert.throws(() => parseXml(text), DavXmlError, name);
});

test(`nesting: ${MAX_DEPTH} levels pass, one more is refused`, () => {
  const nest = (n: number) => '<a>'.repeat(n) + '</a>'.repeat(n);
  assert.equal(parseXml(nest(MAX_DEPTH)).local, 'a');
  assert.throws(() => parseXml(nest(MAX_DEPTH + 1)), /nest at most/);
});

test(`element count: ${MAX_ELEMENTS} pass, one more is refused`, () => {
  const flat = (n: number) => `<r>${'<e/>'.repeat(n - 1)}</r>`;
  assert.equal(parseXml(flat(MAX_ELEMENTS)).children.length, MAX_ELEMENTS - 1);
  assert.throws(() => parseXml(flat(MAX_ELEMENTS + 1)), /at most/);
});

test('isEmptyBody', () => {
  const table: [string, boolean][] = [
    ['', true],
    ['  \r\n\t', true],
    ['\uFEFF', true],
    ['\uFEFF \n', true],
    ['<a/>', false],
    [' x ', false],
  ];
  for (const [text, empty] of table) assert.equal(isEmptyBody(text), empty, JSON.stringify(text));
});

test('escapes text and attribute values', () => {
  const table: [string, string, string][] = [
    ['plain', 'plain', 'plain'],
    ['a<b>&c', 'a&lt;b&gt;&amp;c', 'a&lt;b&gt;&amp;c'],
    ['"q"', '"q"', '&quot;q&quot;'],
    ['t\tn\nr\r', 't\tn\nr&#13;', 't&#9;n&#10;r&#13;'],
    ['ünï €', 'ünï €', 'ünï €'],
  ];
  for (const [raw, text, attr] of table) {
    assert.equal(escapeText(raw), text);
    assert.equal(escapeAttr(raw), attr);
  }
});

test('serializeElement round-trips and embeds under any outer prefixes', () => {
  const docs = [
    '<Z:author xmlns:Z="http://ns.example.com/standards/z39.50/">Jim Whitehead</Z:author>',
    '<x xmlns="">no namespace</x>',
    '<D:owner xmlns:D="DAV:"><D:href>http://example.org/~ejw/contact.html</D:href></D:owner>',
    '<p:v xmlns:p="urn:p" xmlns:q="urn:q" q:attr="1&quot;2" plain="a&#9;b&#10;c" xml:lang="fr">mixed <q:b>bold</q:b> and <i xmlns="">plain</i> &lt;end&gt;&#13;</p:v>',
    '<p:empty xmlns:p="urn:p"/>',
    '<v xmlns="http://example.com/neon/litmus/">\u{10000}\u00e9\u4e2d</v>',
    '<p:nest xmlns:p="urn:p"><p:a><p:b><c xmlns="urn:other"><d/></c></p:b></p:a></p:nest>',
  ];
  for (const doc of docs) {
    const el = parseXml(doc);
    const out = serializeElement(el);
    assert.deepEqual(shape(parseXml(out)), shape(el), out);
    // Embedded inside a document whose prefixes and default namespace differ, it means the same.
    const outer = parseXml(`<D:prop xmlns:D="DAV:" xmlns="urn:outer" xmlns:p="urn:wrong">${out}</D:prop>`);
    assert.deepEqual(shape(outer.children[0] as XmlElement), shape(el), `embedded ${out}`);
  }
});
