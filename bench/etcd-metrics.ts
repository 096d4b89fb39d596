/**
 * etcd's own size figures for a local control plane (dev/control-plane.ts), read from its `/metrics`:
 * the database file (`etcd_mvcc_db_total_size_in_bytes`) and the part of it in use
 * (`etcd_mvcc_db_total_size_in_use_in_bytes`; old revisions count until the API server compacts them,
 * every 5 minutes by default, and freed pages stay in the file until a defragmentation).
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
