import { createServer } from 'node:http';
import { listenOnLoopback } from './loopback.js';

/**
 * The application's page (its own origin): loads the frontend client from Latchkey and opens the
 * Connect UI from a button; every event lands in `window.latchkeyEvents`.
 */
export async function appPage(latchkeyUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>App</title></head><body>
<button id="open">Connect</button>
<script type="module">
import { openConnectUI } from '${latchkeyUrl}/connect/client.js';
window.latchkeyEvents = [];
document.getElementById('open').addEventListener('click', () => {
  openConnectUI({ baseUrl: '${latchkeyUrl}', sessionToken: window.sessionToken, onEvent: (e) => window.latchkeyEvents.push(e) });
});
window.clientReady = true;
</script></body></html>`;
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  const site = await listenOnLoopback(server);
  return {
    url: `${site.origin}/`,
    close: site.close,
  };
}
