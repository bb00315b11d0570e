/** Builds multipart/form-data bodies by hand, so tests control every byte (filenames with `/`, missing boundaries…). */
export type Part = { name?: string; filename?: string; content: string | Buffer; type?: string; rawHeaders?: string };

export function multipartBody(parts: Part[], boundary = '----fc-test-boundary-7MA4YWxkTrZu0gW'): { body: Buffer; contentType: string } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = p.rawHeaders ?? `Content-Disposition: form-data; name="${p.name ?? 'file'}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}\r\nContent-Type: ${p.type ?? 'application/octet-stream'}`;
    chunks.push(Buffer.from(`--${boundary}\r\n${disposition}\r\n\r\n`));
    chunks.push(Buffer.isBuffer(p.content) ? p.content : Buffer.from(p.content));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
