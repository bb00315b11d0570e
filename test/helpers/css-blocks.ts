/**
 * A small structural check of a CSS file: every block that opens closes, no
 * stray `}`, and no rule nested inside a style rule unless the parent says so
 * with an `/* allow-nesting *\/` comment.
 *
 * Why our own scanner and not a CSS parser: by the CSS syntax rules an unclosed
 * block is closed at the end of the file, and with CSS nesting every rule
 * after a missing `}` becomes a valid nested rule, so a conforming parser (and
 * Vite's build) accepts exactly the mistake we want to catch. What we need is
 * the file's shape, which braces, comments and strings are enough to see.
 */

export type CssProblem = { line: number; message: string };

/** At-rules whose block holds rules (not declarations). */
const GROUPING = new Set(['media', 'supports', 'layer', 'container', 'document', 'scope', 'starting-style']);
const KEYFRAMES = /^@(-[a-z]+-)?keyframes\b/i;

type Frame = { kind: 'group' | 'keyframes' | 'declarations'; line: number; prelude: string; allowNesting: boolean };

export function checkCssBlocks(source: string): CssProblem[] {
  const problems: CssProblem[] = [];
  const stack: Frame[] = [];
  let prelude = '';
  let preludeLine = 1;
  let line = 1;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\n') line++;
    if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      const body = source.slice(i + 2, end < 0 ? source.length : end);
      if (end < 0) problems.push({ line, message: 'comment never closed' });
      line += body.split('\n').length - 1;
      const top = stack[stack.length - 1];
      if (top && body.trim() === 'allow-nesting') top.allowNesting = true;
      i = end < 0 ? source.length : end + 1;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < source.length && source[j] !== c && source[j] !== '\n') j += source[j] === '\\' ? 2 : 1;
      if (source[j] !== c) problems.push({ line, message: 'string never closed' });
      prelude += source.slice(i, j + 1);
      i = j;
      continue;
    }
    if (c === '{') {
      const text = prelude.trim().replace(/\s+/g, ' ');
      const parent = stack[stack.length - 1];
      if (parent?.kind === 'declarations' && !parent.allowNesting) {
        problems.push({ line: preludeLine, message: `"${text}" is nested inside "${parent.prelude}" (line ${parent.line}): a missing "}" there? (write /* allow-nesting */ in the parent rule if meant)` });
      }
      const at = /^@([a-z-]+)/i.exec(text)?.[1]?.toLowerCase();
      const kind: Frame['kind'] = at !== undefined && GROUPING.has(at) ? 'group' : KEYFRAMES.test(text) ? 'keyframes' : 'declarations';
      stack.push({ kind, line: preludeLine, prelude: text, allowNesting: false });
      prelude = '';
      continue;
    }
    if (c === '}') {
      if (!stack.pop()) problems.push({ line, message: 'a "}" closes nothing' });
      prelude = '';
      continue;
    }
    if (c === ';') {
      prelude = '';
      continue;
    }
    if (prelude.trim() === '' && c !== undefined && !/\s/.test(c)) preludeLine = line;
    prelude += c;
  }
  for (const open of stack) problems.push({ line: open.line, message: `"${open.prelude}" is never closed` });
  return problems;
}
