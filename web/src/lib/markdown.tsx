import type { ReactNode } from 'react';

/**
 * A small Markdown renderer for previews: headings, paragraphs, lists,
 * quotes, fenced code, rules; inline code, bold, italic and http(s) links.
 * It builds React elements (never HTML strings), so a file cannot inject
 * markup or script into the page.
 */
export function renderMarkdown(source: string): ReactNode[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const out: ReactNode[] = [];
  let i = 0;
  let key = 0;
  while (i < lines.length) {
    const line = lines[i] ?? '';
    const fence = /^\s*(```|~~~)/.exec(line);
    if (fence) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] ?? '').trimStart().startsWith(fence[1] ?? '```')) body.push(lines[i++] ?? '');
      i++;
      out.push(
        <pre key={key++} className="md-code">
          <code>{body.join('\n')}</code>
        </pre>,
      );
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const level = Math.min(6, (heading[1] ?? '#').length);
      const Tag = `h${level}` as 'h1';
      out.push(<Tag key={key++}>{inline(heading[2] ?? '')}</Tag>);
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      out.push(<hr key={key++} />);
      i++;
      continue;
    }
    const listMatch = /^\s*([-*+]|\d+[.)])\s+/.exec(line);
    if (listMatch) {
      const ordered = /\d/.test(listMatch[1] ?? '');
      const items: ReactNode[] = [];
      while (i < lines.length) {
        const m = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i] ?? '');
        if (!m) break;
        items.push(<li key={items.length}>{inline(m[2] ?? '')}</li>);
        i++;
      }
      out.push(ordered ? <ol key={key++}>{items}</ol> : <ul key={key++}>{items}</ul>);
      continue;
    }
    if (/^\s*>/.test(line)) {
      const body: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i] ?? '')) body.push((lines[i++] ?? '').replace(/^\s*>\s?/, ''));
      out.push(<blockquote key={key++}>{inline(body.join(' '))}</blockquote>);
      continue;
    }
    if (line.trim() === '') {
      i++;
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && (lines[i] ?? '').trim() !== '' && !/^(#{1,6}\s|\s*```|\s*~~~|\s*>|\s*([-*+]|\d+[.)])\s)/.test(lines[i] ?? '')) para.push(lines[i++] ?? '');
    out.push(<p key={key++}>{inline(para.join(' '))}</p>);
  }
  return out;
}

const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*|__[^_]+__)|(\*[^*\s][^*]*\*|_[^_\s][^_]*_)|(\[[^\]]+\]\([^)\s]+\))/;

function inline(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  let rest = text;
  let key = 0;
  while (rest) {
    const m = INLINE.exec(rest);
    if (!m) {
      out.push(rest);
      break;
    }
    if (m.index > 0) out.push(rest.slice(0, m.index));
    const t = m[0];
    if (m[1]) out.push(<code key={key++}>{t.slice(1, -1)}</code>);
    else if (m[2]) out.push(<strong key={key++}>{inline(t.slice(2, -2))}</strong>);
    else if (m[3]) out.push(<em key={key++}>{inline(t.slice(1, -1))}</em>);
    else {
      const lm = /^\[([^\]]+)\]\(([^)\s]+)\)$/.exec(t);
      const href = lm?.[2] ?? '';
      out.push(
        /^https?:\/\//i.test(href) ? (
          <a key={key++} href={href} target="_blank" rel="noopener noreferrer">
            {lm?.[1]}
          </a>
        ) : (
          <span key={key++}>{lm?.[1]}</span>
        ),
      );
    }
    rest = rest.slice(m.index + t.length);
  }
  return out;
}
