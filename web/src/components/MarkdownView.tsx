import { useEffect, useRef, useState } from 'react';

/**
 * A Markdown file shown as a document. The renderer (micromark with GFM,
 * web/src/lib/markdown.ts) is loaded the first time a Markdown file is
 * previewed, so the app's first load does not carry it.
 */
export function MarkdownView({ source }: { source: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let current = true;
    import('../lib/markdown').then(
      ({ renderMarkdown }) => {
        if (current) ref.current?.replaceChildren(renderMarkdown(source));
      },
      () => {
        if (current) setFailed(true);
      },
    );
    return () => {
      current = false;
    };
  }, [source]);
  // Should the renderer not load (the app updated underneath), the text itself is still worth showing.
  return failed ? <pre className="preview-text">{source}</pre> : <div className="markdown" ref={ref} />;
}
