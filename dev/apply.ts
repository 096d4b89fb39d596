import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  ApiextensionsV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  loadAllYaml,
  type KubeConfig,
  type KubernetesObject,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';

/** Reads every Kubernetes object from YAML files (a file, or the .yaml files of a folder, sorted). */
export function readManifests(path: string): KubernetesObject[] {
  const files = statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml')
        .sort()
        .map((f) => join(path, f))
    : [path];
  return files.flatMap((f) => (loadAllYaml(readFileSync(f, 'utf8')) as KubernetesObject[]).filter((o) => o && o.kind));
}

/**
 * Server-side apply of objects as field manager `latchkey`: in order by default, or `concurrency` at a
 * time for independent objects (the ~200 Providers of the catalog take seconds instead of a minute).
 */
export async function applyManifests(kc: KubeConfig, objects: KubernetesObject[], namespace?: string, concurrency = 1): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(kc);
  const queue = [...objects];
  const worker = async () => {
    for (let obj = queue.shift(); obj; obj = queue.shift()) {
      const body = structuredClone(obj);
      if (namespace && !body.metadata?.namespace && body.kind !== 'CustomResourceDefinition' && body.kind !== 'Provider') {
        body.metadata = { ...body.metadata, namespace };
      }
      await client.patch(body, undefined, undefined, 'latchkey', true, PatchStrategy.ServerSideApply);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, queue.length)) }, worker));
}

/** Applies the CRDs in `dir` and waits until the API server serves them. */
export async function installCrds(kc: KubeConfig, dir: string, timeoutMs = 60_000): Promise<void> {
  const crds = readManifests(dir).filter((o) => o.kind === 'CustomResourceDefinition');
  await applyManifests(kc, crds);
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    for (;;) {
      const current: V1CustomResourceDefinition = await api.readCustomResourceDefinition({ name: crd.metadata!.name! });
      if (current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata!.name} not established after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
