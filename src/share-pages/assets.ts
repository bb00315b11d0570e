import { createHash } from 'node:crypto';
import { APP_ICON_SVG } from '../lib/app-icon.js';

/**
 * The two static files of the public share pages, kept here as strings so
 * they ship inside the compiled server (no build step, no file lookup). The
 * pages work without them; share.js only adds drag-and-drop upload with
 * progress, the PDF preview and the image gallery.
 */
const CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2330;background:#f4f6f9;min-height:100vh;display:flex;flex-direction:column}
main{width:100%;max-width:60rem;margin:0 auto;padding:1.25rem 1rem;flex:1}
footer{text-align:center;color:#6b7280;font-size:.85rem;padding:1rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem;overflow-wrap:anywhere}
a{color:#1f5fd1}
.note{color:#555e6e}
.error{background:#fdecec;color:#8a1c1c;border:1px solid #f3b4b4;padding:.6rem .8rem;border-radius:.5rem}
.ok{background:#e9f7ee;color:#17603a;border:1px solid #a9dcbc;padding:.6rem .8rem;border-radius:.5rem}
.button,button{display:inline-block;font:inherit;padding:.6rem 1.1rem;border-radius:.5rem;border:1px solid #c7ced9;background:#fff;color:#1d2330;text-decoration:none;cursor:pointer;min-height:2.75rem}
.button.primary,button[type=submit]{background:#1f5fd1;border-color:#1f5fd1;color:#fff}
.crumbs{font-size:.95rem;margin-bottom:.5rem;overflow-wrap:anywhere}.crumbs .sep{margin:0 .35rem;color:#9aa3b2}
.file{background:#fff;border-radius:.75rem;padding:1rem 1.25rem;box-shadow:0 1px 3px #0001}
.size{color:#555e6e;margin:.25rem 0 1rem}
.preview{margin:1rem 0;background:#fff;border-radius:.75rem;padding:.5rem;box-shadow:0 1px 3px #0001;text-align:center}
.preview img,.preview video{max-width:100%;max-height:75vh;height:auto}
.preview audio{width:100%}
.preview iframe{width:100%;height:75vh;border:0}
.preview pre.text{text-align:left;white-space:pre-wrap;overflow-wrap:anywhere;margin:0;padding:.5rem;font:14px/1.45 ui-monospace,Menlo,Consolas,monospace;max-height:75vh;overflow:auto}
.listing{list-style:none;margin:0;padding:0;background:#fff;border-radius:.75rem;box-shadow:0 1px 3px #0001}
.entry{display:flex;align-items:center;gap:.75rem;padding:.5rem .9rem;border-top:1px solid #edf0f4}
.entry:first-child{border-top:0}
.entry .open{flex:1;display:flex;gap:.6rem;align-items:center;min-width:0;text-decoration:none;color:inherit;min-height:2.75rem}
.entry .ename{overflow-wrap:anywhere}
.entry .icon{width:1.4rem;height:1.4rem;flex:none}
.entry .thumb{width:2.75rem;height:2.75rem;flex:none;object-fit:cover;border-radius:.35rem;background:#edf0f4}
.entry .pic{position:relative;width:2.75rem;height:2.75rem;flex:none;display:inline-flex;align-items:center;justify-content:center}
.entry .pic .thumb{position:absolute;inset:0;background:none}
.entry .meta{color:#6b7280;font-size:.9rem;white-space:nowrap}
.entry .dl{font-size:.9rem;white-space:nowrap}
.actions{margin:0 0 1rem}
form.password{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;max-width:28rem}
form.password label{width:100%}
form.password input{flex:1;min-width:10rem;font:inherit;padding:.55rem .7rem;border:1px solid #c7ced9;border-radius:.5rem;min-height:2.75rem}
form.upload{display:flex;flex-direction:column;gap:.75rem;max-width:40rem}
.dropzone{display:flex;flex-direction:column;align-items:center;justify-content:center;gap:.25rem;padding:2rem 1rem;border:2px dashed #9fb3d9;border-radius:.75rem;background:#fff;text-align:center}
.dropzone label{cursor:pointer}
.dropzone.over{background:#eaf1ff;border-color:#1f5fd1}
.dropzone .big{font-size:1.2rem;font-weight:600}
.dropzone .hint{color:#6b7280}
.dropzone input{margin-top:.75rem;max-width:100%}
.dropzone .choose{font-size:1.1rem;font-weight:600;background:#1f5fd1;border-color:#1f5fd1;color:#fff}
.progress progress{width:100%;height:1rem}
.received{margin-top:1.25rem;max-width:40rem}.received h2{font-size:1rem;margin:0 0 .4rem}
.received ul{list-style:none;margin:0;padding:0;background:#fff;border-radius:.75rem;box-shadow:0 1px 3px #0001}
.received li{padding:.45rem .9rem;border-top:1px solid #edf0f4;overflow-wrap:anywhere}.received li:first-child{border-top:0}
[hidden]{display:none!important}
.lightbox{position:fixed;inset:0;background:#000e;display:flex;align-items:center;justify-content:center;z-index:10;touch-action:pan-y}
.lightbox[hidden]{display:none}
.lightbox img{max-width:100vw;max-height:88vh;object-fit:contain}
.lightbox .cap{position:absolute;bottom:.75rem;left:0;right:0;text-align:center;color:#fff;font-size:.95rem;padding:0 3rem;overflow-wrap:anywhere}
.lightbox button{position:absolute;background:#0008;color:#fff;border:0;font-size:1.6rem;min-width:3rem;min-height:3rem;border-radius:2rem}
.lightbox .prev{left:.5rem;top:50%}.lightbox .next{right:.5rem;top:50%}.lightbox .close{right:.5rem;top:.5rem}
@media (max-width:32rem){main{padding:.75rem}.entry{flex-wrap:wrap;row-gap:0}.entry .open{flex-basis:100%;min-height:2.25rem}.entry .meta{margin-left:2.1rem}h1{font-size:1.25rem}}
`;

const JS = `
(function () {
  'use strict';
  function $(sel, root) { return (root || document).querySelector(sel); }
  // The page's language: its messages come from the server, in data-messages on <body>.
  var M = {};
  try { M = JSON.parse(document.body.getAttribute('data-messages') || '{}'); } catch (e) { /* English below */ }
  function msg(key, fallback) { return typeof M[key] === 'string' ? M[key] : fallback; }

  // A PDF or video thumbnail the server cannot draw (a broken file, no poppler or ffmpeg) goes,
  // so its file icon shows instead of the browser's broken-image mark. Failures before this
  // script ran are found by their finished, empty images; later ones by their error events.
  function isPicThumb(img) { return img && img.tagName === 'IMG' && img.parentNode && img.parentNode.className === 'pic'; }
  document.addEventListener('error', function (e) { if (isPicThumb(e.target)) e.target.remove(); }, true);
  Array.prototype.forEach.call(document.querySelectorAll('.pic img'), function (img) {
    if (img.complete && img.naturalWidth === 0 && img.currentSrc) img.remove();
  });

  // Upload-only links: drag and drop, and the form sent with XHR to show progress.
  var form = $('form.upload');
  if (form && window.FormData && window.XMLHttpRequest) {
    var input = $('input[type=file]', form);
    var zone = $('.dropzone', form);
    var bar = $('.progress', form);
    var meter = $('progress', form);
    var status = $('.status', form);
    var received = $('.received');
    var receivedList = $('ul', received);
    // Files go as soon as they are chosen or dropped: the native picker (with its "No file chosen") and the
    // Upload button are for pages without JavaScript; a button of ours opens the picker instead.
    var submit = $('button[type=submit]', form);
    var choose = document.createElement('button');
    choose.type = 'button';
    choose.className = 'choose';
    choose.textContent = msg('chooseFiles', 'Choose files');
    choose.addEventListener('click', function () { input.click(); });
    $('.big', zone).replaceWith(choose);
    input.hidden = true;
    submit.hidden = true;
    var listReceived = function (files) {
      for (var i = 0; i < files.length; i++) {
        var li = document.createElement('li');
        li.textContent = files[i].name;
        receivedList.appendChild(li);
      }
      received.hidden = false;
    };
    var send = function (files) {
      if (!files || files.length === 0) return;
      files = Array.prototype.slice.call(files);
      var data = new FormData();
      for (var i = 0; i < files.length; i++) data.append('file', files[i], files[i].name);
      var xhr = new XMLHttpRequest();
      xhr.open('PUT', form.getAttribute('data-put'));
      bar.hidden = false;
      meter.value = 0;
      status.textContent = msg('uploading', 'Uploading…');
      xhr.upload.onprogress = function (e) { if (e.lengthComputable) { meter.value = Math.round((e.loaded / e.total) * 100); status.textContent = meter.value + ' %'; } };
      xhr.onload = function () {
        if (xhr.status === 201) {
          var n = 0;
          try { n = JSON.parse(xhr.responseText).files_written.length; } catch (e) { n = files.length; }
          meter.value = 100;
          status.textContent = n === 1 ? msg('uploadedOne', '1 file uploaded.') : msg('uploadedMany', '{n} files uploaded.').replace('{n}', n.toLocaleString(document.documentElement.lang));
          // The names this visitor chose, never the ones the folder gave them (those would tell what is there).
          listReceived(files);
          form.reset();
        } else if (xhr.status === 401) {
          location.reload();
        } else {
          var text = msg('uploadFailed', 'The upload failed ({status}).').replace('{status}', xhr.status);
          try { text = JSON.parse(xhr.responseText).message || text; } catch (e) { /* keep the status */ }
          status.textContent = text;
        }
      };
      xhr.onerror = function () { status.textContent = msg('connectionLost', 'The upload failed: the connection was lost.'); };
      xhr.send(data);
    };
    form.addEventListener('submit', function (e) { e.preventDefault(); send(input.files); });
    input.addEventListener('change', function () { send(input.files); });
    ['dragenter', 'dragover'].forEach(function (t) { zone.addEventListener(t, function (e) { e.preventDefault(); zone.classList.add('over'); }); });
    ['dragleave', 'drop'].forEach(function (t) { zone.addEventListener(t, function (e) { e.preventDefault(); zone.classList.remove('over'); }); });
    zone.addEventListener('drop', function (e) { send(e.dataTransfer && e.dataTransfer.files); });
  }

  // PDF preview: the browser's own viewer in a frame.
  var pdf = $('figure[data-pdf]');
  if (pdf) {
    var frame = document.createElement('iframe');
    frame.src = pdf.getAttribute('data-pdf');
    frame.title = msg('pdfTitle', 'PDF preview');
    var hint = document.createElement('p');
    hint.className = 'note';
    var open = document.createElement('a');
    open.href = pdf.getAttribute('data-pdf');
    open.target = '_blank';
    open.rel = 'noopener';
    open.textContent = msg('pdfHintLink', 'open it in a new tab');
    hint.appendChild(document.createTextNode(msg('pdfHintBefore', 'If the document does not show, ')));
    hint.appendChild(open);
    hint.appendChild(document.createTextNode(msg('pdfHintAfter', ' or download it.')));
    pdf.textContent = '';
    pdf.appendChild(frame);
    pdf.appendChild(hint);
  }

  // Gallery: the folder's images in a lightbox; arrow keys, swipe, Escape.
  var links = Array.prototype.slice.call(document.querySelectorAll('a[data-gallery]'));
  if (links.length > 0) {
    var box = document.createElement('div');
    box.className = 'lightbox';
    box.hidden = true;
    box.setAttribute('role', 'dialog');
    box.setAttribute('aria-label', msg('imageViewer', 'Image viewer'));
    var img = document.createElement('img');
    var cap = document.createElement('div');
    cap.className = 'cap';
    var mk = function (cls, label, text) { var b = document.createElement('button'); b.type = 'button'; b.className = cls; b.setAttribute('aria-label', label); b.textContent = text; box.appendChild(b); return b; };
    box.appendChild(img);
    box.appendChild(cap);
    var prev = mk('prev', msg('previousImage', 'Previous image'), '‹');
    var next = mk('next', msg('nextImage', 'Next image'), '›');
    var close = mk('close', msg('close', 'Close'), '×');
    document.body.appendChild(box);
    var at = 0;
    var show = function (i) {
      at = (i + links.length) % links.length;
      var a = links[at];
      img.src = a.getAttribute('data-gallery');
      img.alt = a.textContent.trim();
      cap.textContent = a.textContent.trim() + ' (' + (at + 1) + ' / ' + links.length + ')';
      box.hidden = false;
      box.setAttribute('data-index', String(at));
    };
    var hide = function () { box.hidden = true; img.removeAttribute('src'); links[at].focus(); };
    links.forEach(function (a, i) { a.addEventListener('click', function (e) { if (e.ctrlKey || e.metaKey || e.shiftKey) return; e.preventDefault(); show(i); close.focus(); }); });
    prev.addEventListener('click', function () { show(at - 1); });
    next.addEventListener('click', function () { show(at + 1); });
    close.addEventListener('click', hide);
    box.addEventListener('click', function (e) { if (e.target === box) hide(); });
    document.addEventListener('keydown', function (e) {
      if (box.hidden) return;
      if (e.key === 'ArrowRight') { e.preventDefault(); show(at + 1); }
      else if (e.key === 'ArrowLeft') { e.preventDefault(); show(at - 1); }
      else if (e.key === 'Escape') { e.preventDefault(); hide(); }
    });
    var x0 = null;
    box.addEventListener('touchstart', function (e) { x0 = e.touches[0].clientX; }, { passive: true });
    box.addEventListener('touchend', function (e) {
      if (x0 === null) return;
      var dx = e.changedTouches[0].clientX - x0;
      x0 = null;
      if (Math.abs(dx) > 40) show(at + (dx < 0 ? 1 : -1));
    });
  }
})();
`;

export type Asset = { readonly body: Buffer; readonly type: string; readonly etag: string };

const asset = (text: string, type: string): Asset => {
  const body = Buffer.from(text.trimStart(), 'utf8');
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
};

export const SHARE_ASSETS: Readonly<Record<string, Asset>> = {
  'share.css': asset(CSS, 'text/css; charset=utf-8'),
  'share.js': asset(JS, 'text/javascript; charset=utf-8'),
  'icon.svg': asset(APP_ICON_SVG, 'image/svg+xml'),
};
