/**
 * etcd's own size figures for a local control plane (dev/control-plane.ts), read from its `/metrics`:
 * the database file (`etcd_mvcc_db_total_size_in_bytes`) and the part of it in use
 * (`etcd_mvcc_db_total_size_in_use_in_bytes`; old revisions count until the API server compacts them,
 * every 5 minutes by default, or {@link compactEtcd} does; freed pages stay in the file until a
 * defragmentation).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { metricSum } from './replica-process.js';

/** etcd's client URL of the control plane in `workDir` (its command line names the data directory). */
export function etcdClientUrl(workDir: string): string {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let args: string[];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!args.includes(`--data-dir=${workDir}/etcd`)) continue;
    const url = args.find((a) => a.startsWith('--listen-client-urls='));
    if (url) return url.slice('--listen-client-urls='.length);
  }
  throw new Error(`no etcd running for ${workDir}`);
}

export interface EtcdSize {
  totalBytes: number;
  inUseBytes: number;
}

export async function etcdSize(url: string): Promise<EtcdSize> {
  const page = await (await fetch(`${url}/metrics`)).text();
  return {
    totalBytes: metricSum(page, 'etcd_mvcc_db_total_size_in_bytes'),
    inUseBytes: metricSum(page, 'etcd_mvcc_db_total_size_in_use_in_bytes'),
  };
}

/**
 * Compacts etcd to its current revision and waits for it (`physical`), through its gRPC gateway, so
 * that the in-use size that follows counts the live objects only, not the old revisions of rewritten
 * ones (what the API server's own compaction, every 5 minutes, would do).
 */
export async function compactEtcd(url: string): Promise<void> {
  const range = await fetch(`${url}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('\0').toString('base64') }) });
  const revision = ((await range.json()) as { header: { revision: string } }).header.revision;
  const res = await fetch(`${url}/v3/kv/compaction`, { method: 'POST', body: JSON.stringify({ revision, physical: true }) });
  // Already compacted to this revision (by the API server just now) is as good.
  if (!res.ok && !(await res.text()).includes('compacted')) throw new Error(`etcd compaction: ${res.status}`);
}
