/**
 * The basic UI's one style sheet, served as /basic/style.css (kept in a module
 * so the build needs no asset copying). Small and optional: every page reads
 * well without it, in text browsers too.
 */
export const BASIC_CSS = `:root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.4}
body{margin:0 auto;max-width:70rem;padding:0 1rem 2rem}
header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;padding:.75rem 0;border-bottom:1px solid #8884}
.brand{font-weight:600;text-decoration:none}
.tag{color:#888;font-size:.9em}
.signout{margin-left:auto;display:flex;gap:.5rem;align-items:center}
.crumbs{margin-top:1rem;color:#666}
h1{font-size:1.4rem;word-break:break-word}
.forms{display:flex;flex-wrap:wrap;gap:1rem 2rem;margin:1rem 0}
.forms form{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
table{border-collapse:collapse;width:100%}
caption{text-align:left;color:#666;padding:.25rem 0}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #8883;vertical-align:top}
td.name{word-break:break-word}
td.size,td.date{white-space:nowrap}
td.kind{color:#888;font-size:.85em}
td.actions a{margin-right:.5rem}
.msg{background:#3b6ef51a;border-left:4px solid #3b6ef5;padding:.5rem .75rem}
.error{background:#d331;border-left:4px solid #d33;padding:.5rem .75rem}
.small{color:#888;font-size:.9em}
button.danger{color:#fff;background:#c22;border:1px solid #a11;padding:.3rem .8rem}
@media (max-width:40rem){td.kind,th:first-child,td.date,th:nth-child(4){display:none}}
`;
