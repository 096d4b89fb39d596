/**
 * The Connect UI's page weight: what an end user's browser downloads to show a list of ten
 * integrations of shipped providers (each with its logo served by Latchkey), measured in headless
 * chromium against a real server: the HTML (with its inline CSS), the script, the session's JSON and
 * the logos, as sent (Latchkey does not compress them) and as gzip would send them. Goal: under 150 KB.
 */
import { createServer } from 'node:net';
import { gzipSync } from 'node:zlib';
import { KubeConfig } from '@kubernetes/client-node';
import { chromium } from 'playwright-core';
import { createContext } from '../src/app/context.js';
import { PROVIDER_LOGOS } from '../src/catalog/provider-logo-data.js';
import { startHttpServer } from '../src/http/server.js';
import { sealSessionToken } from '../src/auth/session-tokens.js';
import { loadConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/log.js';
import { createTestNamespace, eventually } from '../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider } from '../dev/fixtures.js';
import { writeFigures } from './figures.js';
import { machine, writeSection, startBenchControlPlane } from './support.js';

const GOAL_BYTES = 150 * 1024;
/** Ten shipped providers with a logo, as an application might offer them. */
const PROVIDERS = ['github', 'gitlab', 'hubspot', 'stripe', 'notion', 'zendesk', 'shopify', 'asana', 'trello', 'airtable'];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Part {
  kind: 'html' | 'css' | 'js' | 'json' | 'logos';
  bytes: number;
  gzipBytes: number;
}

async function main(): Promise<void> {
  const log = (l: string) => process.stderr.write(`[connect-ui] ${l}\n`);
  const machineLines = machine();
  const { cp, kc } = await startBenchControlPlane(new KubeConfig());
  const ns = await createTestNamespace(kc, 'bench-connect-ui');
  const env = await createEnvironment(kc, ns.name);
  for (const name of PROVIDERS) {
    if (!PROVIDER_LOGOS[name]) throw new Error(`${name} has no shipped logo`);
    await applyProvider(kc, name, { displayName: PROVIDER_LOGOS[name].title, authMode: 'API_KEY', categories: ['productivity'] });
    await createIntegration(kc, ns.name, name, { provider: name });
  }
  const port = await freePort();
  const config = loadConfig({
    LATCHKEY_LOG_LEVEL: 'silent',
    LATCHKEY_WATCH_NAMESPACES: ns.name,
    LATCHKEY_LEADER_ELECTION: 'false',
    POD_NAME: 'bench-connect-ui',
    LATCHKEY_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
  });
  const ctx = createContext({ config, logger: createLogger('silent'), kc });
  await ctx.caches.start();
  const server = await startHttpServer(ctx, port, '127.0.0.1');
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    await eventually(
      () => PROVIDERS.every((p) => ctx.catalog.getIntegration(ns.name, p)) && ctx.catalog.listEnvironments(ns.name).length > 0,
    );
    const token = sealSessionToken(
      {
        sid: 'bench',
        exp: Math.floor(Date.now() / 1000) + 600,
        namespace: ns.name,
        endUser: { id: 'bench' },
        allowedIntegrations: PROVIDERS,
      },
      env.secretKey,
    );
    const page = await (await browser.newContext({ viewport: { width: 480, height: 720 } })).newPage();
    const parts: Part[] = [];
    const pending: Array<Promise<void>> = [];
    page.on('response', (res) => {
      pending.push(
        res.body().then(
          (body) => {
            const type = res.headers()['content-type'] ?? '';
            const part = (kind: Part['kind'], bytes: Buffer) =>
              parts.push({ kind, bytes: bytes.length, gzipBytes: gzipSync(bytes).length });
            if (type.startsWith('text/html')) {
              // The CSS is inline: counted on its own, the rest as HTML.
              const html = body.toString('utf8');
              const css = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? '';
              part('css', Buffer.from(css));
              part('html', Buffer.from(html.replace(css, '')));
            } else if (type.startsWith('text/javascript')) part('js', body);
            else if (type.startsWith('application/json')) part('json', body);
            else if (type.startsWith('image/')) part('logos', body);
          },
          () => undefined,
        ),
      );
    });
    await page.goto(`${server.url}/connect?session_token=${encodeURIComponent(token)}`);
    await page.waitForSelector('ul.integrations');
    // A string: this file compiles without the DOM library.
    await page.waitForFunction(`[...document.querySelectorAll('img.logo')].filter((i) => i.complete).length === ${PROVIDERS.length}`);
    await Promise.all(pending);
    const sum = (kind?: Part['kind']) =>
      parts
        .filter((p) => !kind || p.kind === kind)
        .reduce((a, p) => ({ bytes: a.bytes + p.bytes, gzipBytes: a.gzipBytes + p.gzipBytes }), { bytes: 0, gzipBytes: 0 });
    const rows = (['html', 'css', 'js', 'json', 'logos'] as const).map((kind) => ({ kind, ...sum(kind) }));
    const total = sum();
    const logoCount = parts.filter((p) => p.kind === 'logos').length;
    log(`total ${total.bytes} bytes (${total.gzipBytes} gzip), ${logoCount} logos`);
    writeFigures('connectUiWeight', {
      integrations: PROVIDERS.length,
      logos: logoCount,
      parts: Object.fromEntries(rows.map((r) => [r.kind, { bytes: r.bytes, gzipBytes: r.gzipBytes }])),
      totalBytes: total.bytes,
      totalGzipBytes: total.gzipBytes,
      goalBytes: GOAL_BYTES,
    });
    const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
    const label = {
      html: 'HTML (without its CSS)',
      css: 'CSS (inline in the HTML)',
      js: 'script (`/connect/ui.js`)',
      json: 'session (`/connect/api/session`)',
      logos: `logos (${logoCount} SVGs from \`/connect/logos/\`)`,
    };
    writeSection(
      'connect-ui',
      `## Connect UI page weight (\`npm run bench:connect-ui\`, \`bench/connect-ui-weight.ts\`)

What headless chromium downloads for the Connect UI listing ${PROVIDERS.length} integrations of shipped providers
(${PROVIDERS.join(', ')}), each with its logo served by Latchkey; measured from the responses the
page received. Latchkey sends these uncompressed; the gzip column is what a compressing Ingress would send.
Goal: under 150 KB.

| part | bytes | gzip |
|---|---:|---:|
${rows.map((r) => `| ${label[r.kind]} | ${kb(r.bytes)} | ${kb(r.gzipBytes)} |`).join('\n')}
| **total** | **${kb(total.bytes)}** | ${kb(total.gzipBytes)} |

${total.bytes < GOAL_BYTES ? 'Under the goal' : '**Over the goal**'} (${kb(GOAL_BYTES)}).

${machineLines.join('\n')}
`,
    );
  } finally {
    await browser.close();
    await server.close();
    await ctx.caches.stop();
    await ns.delete();
    for (const name of PROVIDERS) await deleteProvider(kc, name);
    await cp.stop();
  }
}

await main();
