/**
 * The local TCP ports of a process's sockets (Linux /proc): lets a fault proxy tell the requests of a
 * process the test is about to kill from the others (see HttpFaultProxy.dropFrom).
 */
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

export function localPortsOf(pid: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    // "sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ..."
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && inodes.has(cols[9]!)) ports.add(parseInt(cols[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}
