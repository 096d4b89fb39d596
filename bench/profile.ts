/**
 * CPU profiles of one benchmark phase: V8's sampling profiler (the one `node --cpu-prof` starts),
 * driven through `node:inspector` so that a profile covers exactly the phase under load and not the
 * set-up. Summarised as the top self-time entries, by function and where it lives; the raw
 * `.cpuprofile` is written too (open it in Chrome DevTools or speedscope for a flame graph).
 */
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { REPO_ROOT } from '../dev/repo-root.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
}

export interface ProfileEntry {
  /** Function and where it lives (package, or repository path). */
  what: string;
  selfMs: number;
  /** Share of the samples while the process was busy (idle and GC shown apart). */
  share: number;
}

export interface ProfileSummary {
  busyMs: number;
  idleShare: number;
  gcShare: number;
  top: ProfileEntry[];
  /** Self time grouped by package (or `latchkey`, `node:internal`). */
  byPackage: ProfileEntry[];
}

export async function startProfile(): Promise<() => Promise<CpuProfile>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile };
    session.disconnect();
    return profile;
  };
}

export function saveProfile(profile: CpuProfile, path: string): void {
  writeFileSync(path, JSON.stringify(profile));
}

/** Where a frame lives: `express`, `zod`, `src/http/app.ts`, `node:internal/...`. */
function place(url: string): string {
  if (!url) return '';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (nm) return nm[1]!;
  const ours = url.indexOf('/dist/');
  if (ours >= 0) return url.slice(ours + 6).replace(/\.js$/, '.ts');
  return url.replace(/^file:\/\//, '');
}

export function summarize(profile: CpuProfile, top = 15): ProfileSummary {
  const intervalMs = (profile.endTime - profile.startTime) / 1000 / Math.max(1, profile.samples?.length ?? 1);
  const self = new Map<string, number>();
  const byPkg = new Map<string, number>();
  let idle = 0;
  let gc = 0;
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (!hits) continue;
    total += hits;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idle += hits;
      continue;
    }
    if (functionName === '(garbage collector)') gc += hits;
    const where = place(url);
    const key = `${functionName || '(anonymous)'}${where ? ` ${where}:${lineNumber + 1}` : ''}`;
    self.set(key, (self.get(key) ?? 0) + hits);
    const pkg = !url ? functionName : url.includes('node_modules') ? where : url.startsWith('node:') ? 'node:internal' : 'latchkey';
    byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + hits);
  }
  const busy = total - idle;
  const entries = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([what, hits]) => ({ what, selfMs: hits * intervalMs, share: busy ? hits / busy : 0 }));
  return {
    busyMs: busy * intervalMs,
    idleShare: total ? idle / total : 0,
    gcShare: busy ? gc / busy : 0,
    top: entries(self, top),
    byPackage: entries(byPkg, 10),
  };
}

export const PROFILE_DIR = `${REPO_ROOT}/bench/profiles`;
