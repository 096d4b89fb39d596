/**
 * `startControlPlane({ etcdServers })`: the API server stores its objects in an etcd API the caller
 * runs (kine on Postgres for the benchmark past etcd, dev/kine-postgres.ts) and starts no etcd of its
 * own. Here the caller's store is a plain etcd started by the test from the cached binaries: an object
 * written through the API server must be found under its key in that etcd, and the control plane must
 * refuse to stop an etcd it did not start.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { buildControlPlane, freePort, startControlPlane, stopChild, type ControlPlane } from '../../dev/control-plane.js';

let etcd: ChildProcess;
let etcdUrl: string;
let dataDir: string;
let cp: ControlPlane | undefined;

beforeAll(async () => {
  const bin = await buildControlPlane();
  dataDir = mkdtempSync(join(tmpdir(), 'latchkey-external-etcd-'));
  const [client, peer] = [await freePort(), await freePort()];
  etcdUrl = `http://127.0.0.1:${client}`;
  etcd = spawn(
    join(bin, 'etcd'),
    [
      '--name=external',
      `--data-dir=${join(dataDir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-cluster=external=http://127.0.0.1:${peer}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ],
    { stdio: 'ignore' },
  );
  cp = await startControlPlane({ etcdServers: etcdUrl, controllerManager: false });
}, 300_000);

afterAll(async () => {
  await cp?.stop();
  await stopChild(etcd);
  rmSync(dataDir, { recursive: true, force: true });
});

/** The stored value under `key` in the caller's etcd (its gRPC gateway), or undefined. */
async function storedValue(key: string): Promise<string | undefined> {
  const res = await fetch(`${etcdUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from(key).toString('base64') }) });
  const body = (await res.json()) as { kvs?: Array<{ value: string }> };
  const value = body.kvs?.[0]?.value;
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}

test('the API server keeps its objects in the etcd API it is given', async () => {
  const kc = new KubeConfig();
  kc.loadFromFile(cp!.kubeconfigPath);
  const name = `external-storage-${Date.now()}`;
  await kc
    .makeApiClient(CoreV1Api)
    .createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name }, data: { marker: name } } });
  // The create returns once the store has it. ConfigMaps are stored in protobuf: the marker appears as-is among its bytes.
  expect(await storedValue(`/registry/configmaps/default/${name}`)).toContain(name);
});

test('a control plane on a given etcd API does not stop or start it', async () => {
  await expect(cp!.stopEtcd()).rejects.toThrow('did not start');
  await expect(cp!.startEtcd()).rejects.toThrow('did not start');
  // The caller's etcd still answers.
  expect((await fetch(`${etcdUrl}/health`)).ok).toBe(true);
});
