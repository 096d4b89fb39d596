/**
 * `npm start` twice, as a person would: the launcher (dist/dev/start-local.js) with no reachable
 * cluster starts its own control plane in a data directory (a temporary one here), installs the whole
 * catalog, and prints the sample secret key. A connection is imported, Ctrl-C is pressed (SIGINT to
 * the launcher's whole process group, as a terminal sends it), and the second start shows the same
 * key and the same connection. Then `--reset` starts empty.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, REPO_ROOT } from '../../dev/control-plane.js';

const dataDir = mkdtempSync(join(tmpdir(), 'latchkey-start-'));
const catalogSize = readdirSync(join(REPO_ROOT, 'config/providers')).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml').length;

interface Started {
  child: ChildProcess;
  url: string;
  secretKey: string;
  output: () => string;
}

/** Runs the launcher until it prints its banner. */
async function startLocal(args: string[] = []): Promise<Started> {
  const [httpPort, controllerPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [join(REPO_ROOT, 'dist/dev/start-local.js'), ...args], {
    cwd: REPO_ROOT,
    // Its own process group, like a shell's foreground job: the Ctrl-C below goes to the whole group.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      // No cluster to find: a kubeconfig that does not exist, and no in-cluster variables.
      KUBECONFIG: join(dataDir, 'no-such-kubeconfig'),
      LATCHKEY_DATA_DIR: dataDir,
      LATCHKEY_HTTP_PORT: String(httpPort),
      LATCHKEY_CONTROLLER_PORT: String(controllerPort),
      LATCHKEY_LOG_LEVEL: 'info',
    },
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const banner = await new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not come up:\n${out.slice(-3000)}`)), 240_000);
    const check = () => {
      const m = out.match(/Latchkey is running at (\S+)\n\s+sample environment: .*\n\s+secret key:\s+(\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited ${code}:\n${out.slice(-3000)}`));
    });
  });
  return { child, url: banner[1], secretKey: banner[2], output: () => out };
}

/** Ctrl-C in the terminal: SIGINT to the launcher's process group. Resolves with how it exited. */
async function ctrlC(s: Started): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  const exited = new Promise<number | null>((r) => s.child.once('exit', (code) => r(code)));
  process.kill(-s.child.pid!, 'SIGINT');
  const code = await exited;
  return { code, ms: Date.now() - started };
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

async function call(s: Started, method: string, path: string, body?: unknown) {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${s.secretKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/**
 * The key index follows the Environment's Secret through a watch: retry a 401 for a moment (and a 429:
 * many 401s in a row throttle this address for a few seconds).
 */
async function callWhenReady(s: Started, method: string, path: string, body?: unknown) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await call(s, method, path, body);
    if ((r.status !== 401 && r.status !== 429) || Date.now() > deadline) return r;
    await new Promise((res) => setTimeout(res, 200));
  }
}

const running: Started[] = [];
afterAll(async () => {
  for (const s of running) if (s.child.exitCode === null && s.child.signalCode === null) await ctrlC(s);
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

// One case: each step needs the data the step before it left in the data directory.
it('npm start keeps its data: the first start imports a connection, Ctrl-C stops everything, the second start has the same key and connection, --reset starts empty', async () => {
  const first = await startLocal();
  running.push(first);
  const providers = await callWhenReady(first, 'GET', '/providers');
  expect(providers.status).toBe(200);
  expect(providers.body.data).toHaveLength(catalogSize);
  const imported = await call(first, 'POST', '/connections', {
    provider_config_key: 'openai',
    connection_id: 'user-42',
    credentials: { type: 'API_KEY', apiKey: 'sk-kept-across-restarts' },
    end_user: { id: '42', email: 'ada@example.com' },
  });
  expect([imported.status, imported.body.connection_id]).toEqual([201, 'user-42']);
  const apiPort = Number(/control plane ready at https:\/\/127\.0\.0\.1:(\d+)/.exec(first.output())![1]);

  // Ctrl-C stops the launcher and its control plane: nothing is left behind, the API server's port is closed.
  expect((await ctrlC(first)).code).toBe(0);
  expect(await portAnswers(apiPort)).toBe(false);

  // The second start has the same secret key and the connection made in the first.
  const second = await startLocal();
  running.push(second);
  expect(second.secretKey).toBe(first.secretKey);
  const fetched = await callWhenReady(second, 'GET', '/connections/user-42?provider_config_key=openai');
  expect([fetched.status, fetched.body.credentials]).toEqual([200, { type: 'API_KEY', apiKey: 'sk-kept-across-restarts' }]);
  const list = await call(second, 'GET', '/connections');
  expect(list.body.connections.map((c: { connection_id: string }) => c.connection_id)).toEqual(['user-42']);
  expect((await ctrlC(second)).code).toBe(0);

  // --reset starts empty, with a new secret key.
  const third = await startLocal(['--reset']);
  running.push(third);
  expect(third.secretKey).not.toBe(first.secretKey);
  const empty = await callWhenReady(third, 'GET', '/connections');
  expect([empty.status, empty.body.connections]).toEqual([200, []]);
  expect((await ctrlC(third)).code).toBe(0);
}, 900_000);
