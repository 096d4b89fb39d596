/** Starts test/support/servers/oauth1_server.py (Debian's oauthlib) with the system Python, on 127.0.0.1 (or `host`). */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface OAuth1TestServer {
  url: string;
  close(): Promise<void>;
}

/** With `tba`, the server also answers NetSuite-style TBA requests under /services/rest/ (HMAC-SHA256, that token, that realm). */
export async function startOAuth1Server(
  consumerKey: string,
  consumerSecret: string,
  tba?: { tokenId: string; tokenSecret: string; realm: string },
  host = '127.0.0.1',
): Promise<OAuth1TestServer> {
  // Compiled to dist/test/connect; the script stays in the source tree.
  const script = fileURLToPath(new URL('../../../../test/support/servers/oauth1_server.py', import.meta.url));
  const child: ChildProcess = spawn(
    '/usr/bin/python3',
    [script, consumerKey, consumerSecret, ...(tba ? [tba.tokenId, tba.tokenSecret, tba.realm] : [])],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, OAUTH1_SERVER_HOST: host } },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`oauth1 server did not start: ${stderr}`)), 15_000);
    child.once('exit', (code) => reject(new Error(`oauth1 server exited with ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^READY (\d+)$/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
