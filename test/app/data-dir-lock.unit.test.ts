/**
 * One `npm start` per data directory. A process holds the lock (the lock function, run in a process of
 * its own); the real launcher (dist/dev/start-local.js, no cluster reachable) started on the same
 * directory exits non-zero at once, naming that process, and touches nothing there. The holder's exit
 * releases the lock; a lock whose process is gone is taken over.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirLockedError, LOCK_FILE, lockDataDir } from '../../dev/data-dir-lock.js';
import { REPO_ROOT } from '../../dev/repo-root.js';

const LOCK_MODULE = join(REPO_ROOT, 'dist/dev/data-dir-lock.js');
const dirs: string[] = [];
const children: ChildProcess[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-lock-'));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A process that takes the lock, says so, and holds it until SIGTERM (then exits normally). */
async function holder(dir: string): Promise<ChildProcess> {
  const script = `
    const { lockDataDir } = await import(${JSON.stringify(LOCK_MODULE)});
    lockDataDir(${JSON.stringify(dir)});
    process.on('SIGTERM', () => process.exit(0));
    process.stdout.write('locked\\n');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
    child.once('exit', (code) => reject(new Error(`the lock holder exited ${code}`)));
  });
  return child;
}

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((r) => child.once('exit', (code) => r(code)));
}

/** `npm start` as a person runs it, with no cluster to find: it would start its local control plane in `dir`. */
async function launcher(dir: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'dist/dev/start-local.js')], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, KUBECONFIG: join(dir, 'no-such-kubeconfig'), LATCHKEY_DATA_DIR: dir },
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const code = await exited(child);
  return { code, output };
}

it('a second npm start on a held data directory exits non-zero naming the holder, and leaves the directory alone', async () => {
  const dir = tempDir();
  const first = await holder(dir);
  const lockPath = join(dir, LOCK_FILE);
  expect(readFileSync(lockPath, 'utf8').trim()).toBe(String(first.pid));

  const second = await launcher(dir);
  expect(second.code).not.toBe(0);
  expect(second.output).toContain(`process ${first.pid}`);
  expect(second.output).toContain(dir);
  // Nothing of a control plane was started or written; the lock is still the first's.
  expect(readdirSync(dir).sort()).toEqual([LOCK_FILE]);
  expect(readFileSync(lockPath, 'utf8').trim()).toBe(String(first.pid));

  // The holder's normal exit releases the lock.
  first.kill('SIGTERM');
  expect(await exited(first)).toBe(0);
  expect(existsSync(lockPath)).toBe(false);
}, 60_000);

it('takes over a lock whose process is gone, and refuses one whose process lives', async () => {
  const dir = tempDir();
  const gone = spawn(process.execPath, ['-e', '']);
  await exited(gone);
  const lockPath = join(dir, LOCK_FILE);
  writeFileSync(lockPath, `${gone.pid}\n`);

  const lock = lockDataDir(dir);
  expect(readFileSync(lockPath, 'utf8').trim()).toBe(String(process.pid));

  const live = await holder(tempDir()); // a live process to stand for another launcher
  writeFileSync(lockPath, `${live.pid}\n`);
  expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
  expect(() => lockDataDir(dir)).toThrow(`process ${live.pid}`);
  // release() removes only a lock that is still this process's.
  lock.release();
  expect(readFileSync(lockPath, 'utf8').trim()).toBe(String(live.pid));
  writeFileSync(lockPath, `${process.pid}\n`);
  const again = lockDataDir(dir);
  again.release();
  expect(existsSync(lockPath)).toBe(false);
  live.kill('SIGKILL');
}, 60_000);
