/** The dashboard's HTML shell and stylesheet (the Connect UI's look, wider). The script fills the page. */

export const DASHBOARD_CSS = `
:root{color-scheme:light;--fg:#1b1f24;--muted:#5b6470;--line:#e3e6ea;--accent:#3553d1;--bg:#f5f6f8;--ok:#1f8a4c;--bad:#b42318;--warn:#a15c07}
*{box-sizing:border-box}
body{margin:0;min-height:100vh;background:var(--bg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg)}
header.top{display:flex;align-items:center;gap:20px;padding:12px 24px;background:#fff;border-bottom:1px solid var(--line)}
header.top .brand{font-weight:700;font-size:16px}
header.top nav{display:flex;gap:4px;flex:1}
header.top nav a{padding:6px 10px;border-radius:8px;color:var(--muted);text-decoration:none}
header.top nav a[aria-current=page]{background:#eef1fd;color:var(--accent);font-weight:600}
main{max-width:1100px;margin:0 auto;padding:24px 16px}
.card{background:#fff;border:1px solid var(--line);border-radius:12px;padding:20px;box-shadow:0 1px 3px rgba(0,0,0,.05);margin-bottom:16px}
.signin{max-width:420px;margin:64px auto}
h1{font-size:20px;margin:0 0 12px}
h2{font-size:16px;margin:0 0 10px}
.muted{color:var(--muted)}
.with-logo{display:flex;gap:10px;align-items:flex-start}
.logo{flex:none;width:28px;height:28px;border-radius:6px}
.logo.initial{display:grid;place-items:center;background:#e8ecfb;color:var(--accent);font-weight:600}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;text-transform:uppercase;letter-spacing:.03em;color:var(--muted)}
tr.clickable{cursor:pointer}
tr.clickable:hover{background:#f8f9ff}
.field{display:flex;flex-direction:column;gap:4px;margin-bottom:12px}
label{font-weight:600;font-size:13px}
input,select{font:inherit;padding:8px 10px;border:1px solid #c9ced6;border-radius:8px;background:#fff}
input:focus,select:focus{outline:2px solid #c7d0f6;border-color:var(--accent)}
.toolbar{display:flex;gap:8px;align-items:flex-end;flex-wrap:wrap;margin-bottom:12px}
.toolbar .field{margin:0}
button{font:inherit;cursor:pointer;border-radius:8px;padding:8px 14px;border:1px solid var(--line);background:#fff}
button.primary{border:0;background:var(--accent);color:#fff;font-weight:600}
button.danger{border:1px solid #f0c2bd;color:var(--bad)}
button:disabled{opacity:.6;cursor:default}
.badge{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;font-weight:600;background:#eef0f3;color:var(--muted)}
.badge.ready,.badge.success{background:#e5f5ec;color:var(--ok)}
.badge.failing,.badge.failure,.badge.needs_reauthorization,.badge.not-ready{background:#fdecea;color:var(--bad)}
.badge.refreshing{background:#fff4e0;color:var(--warn)}
.error{color:var(--bad)}
.notice{background:#fff7e6;border:1px solid #f5d9a0;border-radius:8px;padding:10px 12px;margin-bottom:12px}
dl{display:grid;grid-template-columns:180px 1fr;gap:6px 12px;margin:0}
dt{color:var(--muted)}
dd{margin:0;word-break:break-word}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f7f9;border:1px solid var(--line);border-radius:8px;padding:10px;margin:0}
a{color:var(--accent)}
.actions{display:flex;gap:8px;flex-wrap:wrap}
.pager{display:flex;justify-content:space-between;align-items:center;margin-top:12px}
`;

/** The page: an empty main the script renders into (no inline script or style: the CSP forbids both). */
export function dashboardPage(basePath: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Latchkey dashboard</title>
<link rel="stylesheet" href="${basePath}/dashboard/dashboard.css"></head>
<body><div id="app"><main><p class="muted">Loading…</p></main></div>
<script type="module" src="${basePath}/dashboard/dashboard.js"></script></body></html>`;
}
