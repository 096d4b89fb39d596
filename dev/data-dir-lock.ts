/**
 * One `npm start` per data directory: a lock file holding the launcher's PID, created atomically (a
 * hard link of a file already written, so no one reads it half-written). Two launchers on one
 * directory once both wrote its keys and ports and then failed forever with `invalid bearer token`.
 * A lock whose process is gone (killed, crashed) is taken over.
 */
import { linkSync, mkdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = 'latchkey.lock';
/** A takeover guard older than this was left by a process that died while taking over. */
const STALE_GUARD_MS = 10_000;

export class DataDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      `the data directory ${dir} is in use by another \`npm start\` (process ${pid}). Stop that one first, or set LATCHKEY_DATA_DIR to another directory.`,
    );
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  path: string;
  /** Removes the lock file if it is still this process's. Idempotent. */
  release(): void;
}

/** True while a process with that PID exists (EPERM: it exists, owned by someone else). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function holderOf(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock on `dir` for process `pid`, or throws {@link DataDirLockedError} naming the process
 * that holds it. Released on the process's exit (and by `release()`).
 */
export function lockDataDir(dir: string, pid = process.pid): DataDirLock {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  const mine = `${path}.${pid}`;
  writeFileSync(mine, `${pid}\n`, { mode: 0o600 });
  try {
    for (;;) {
      try {
        linkSync(mine, path); // fails with EEXIST if anyone holds it
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = holderOf(path);
      if (holder !== undefined && holder !== pid && isAlive(holder)) throw new DataDirLockedError(dir, holder);
      removeStale(path, holder);
    }
  } finally {
    rmSync(mine, { force: true });
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.removeListener('exit', release);
    if (holderOf(path) === pid) rmSync(path, { force: true });
  };
  process.once('exit', release);
  return { path, release };
}

/**
 * Removes a lock whose holder is gone, under a guard file, so that of two launchers finding the same
 * stale lock only one removes it (the other would otherwise remove the winner's fresh lock).
 */
function removeStale(path: string, staleHolder: number | undefined): void {
  const guard = `${path}.takeover`;
  try {
    writeFileSync(guard, '', { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // Another launcher is taking over; a guard left by one that died there is removed after a while.
    if (Date.now() - mtimeOf(guard) > STALE_GUARD_MS) rmSync(guard, { force: true });
    else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10); // a short synchronous pause
    return;
  }
  try {
    if (holderOf(path) === staleHolder) unlinkSyncIfThere(path);
  } finally {
    rmSync(guard, { force: true });
  }
}

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function unlinkSyncIfThere(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
