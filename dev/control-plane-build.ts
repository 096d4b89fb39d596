/**
 * Runs dev/controlplane/build.sh (its text is part of the binary cache key, so it is left alone) and
 * turns the first run's few hundred lines of Go output into progress a person can follow: which
 * binary is being built and for how long. The full output goes to a log file, named on failure.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './repo-root.js';

const PROGRESS_EVERY_MS = 15_000;
// `go build -v` prints each package as it compiles it; the first build's main packages come last.
const APISERVER_MAINS = ['k8s.io/kubernetes/cmd/kube-apiserver', 'k8s.io/kubernetes/cmd/kube-controller-manager'];

/** What the build is doing, from its output lines. */
export class BuildProgress {
  private downloads = 0;
  private compiled = 0;
  private mainsSeen = new Set<string>();
  started = false;

  /** Feeds one line of output; returns true when the step changed. */
  line(text: string): boolean {
    const before = this.step;
    if (text.startsWith('building ')) this.started = true;
    else if (text.startsWith('go: downloading ')) this.downloads++;
    else if (/^[^\s#:]+\/\S+$/.test(text)) {
      this.compiled++;
      if (APISERVER_MAINS.includes(text)) this.mainsSeen.add(text);
    }
    return this.step !== before;
  }

  get step(): string {
    if (this.mainsSeen.size === APISERVER_MAINS.length) return 'etcd';
    if (this.compiled > 0) return 'kube-apiserver and kube-controller-manager';
    if (this.downloads > 0) return 'downloading Go modules';
    // Go's build cache was warm: nothing is compiled, only linked, and go prints nothing meanwhile.
    return 'kube-apiserver, kube-controller-manager and etcd';
  }

  describe(elapsedMs: number): string {
    const counts =
      this.step === 'downloading Go modules'
        ? `${this.downloads} modules, `
        : this.compiled > 0
          ? `${this.compiled} packages compiled, `
          : '';
    return `building the control plane: ${this.step} (${counts}${formatElapsed(elapsedMs)} elapsed)`;
  }
}

export function formatElapsed(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** Builds (or finds in the cache) etcd, kube-apiserver and kube-controller-manager; returns their folder. */
export async function buildControlPlane(log: (line: string) => void = () => undefined): Promise<string> {
  const script = join(REPO_ROOT, 'dev/controlplane/build.sh');
  const logPath = join(tmpdir(), `latchkey-controlplane-build-${process.pid}-${Date.now()}.log`);
  const logFile = createWriteStream(logPath);
  const env = { ...process.env, GOFLAGS: `${process.env.GOFLAGS ?? ''} -v`.trim() };
  const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'pipe'], env });
  const startedAt = Date.now();
  const progress = new BuildProgress();
  let out = '';
  let partial = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    logFile.write(d);
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const wasStarted = progress.started;
      if (progress.line(line.trim()) || (!wasStarted && progress.started)) {
        if (!wasStarted && progress.started) log(`${line.trim()} (full output: ${logPath})`);
        else log(progress.describe(Date.now() - startedAt));
      }
    }
  });
  const ticker = setInterval(() => progress.started && log(progress.describe(Date.now() - startedAt)), PROGRESS_EVERY_MS);
  const code: number = await new Promise((resolveCode) => child.on('close', (c) => resolveCode(c ?? 1)));
  clearInterval(ticker);
  await new Promise((r) => logFile.end(r));
  if (code !== 0) {
    const tail = readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-15).join('\n');
    throw new Error(`building the local control plane failed (exit ${code}); full output in ${logPath}; its end:\n${tail}`);
  }
  if (progress.started) log(`built the control plane in ${formatElapsed(Date.now() - startedAt)}`);
  rmSync(logPath, { force: true });
  return out.trim().split('\n').pop()!;
}
