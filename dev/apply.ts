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

/** Server-side apply of objects, in order, as field manager `latchkey`. */
export async function applyManifests(kc: KubeConfig, objects: KubernetesObject[], namespace?: string): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(kc);
  for (const obj of objects) {
    const body = structuredClone(obj);
    if (namespace && !body.metadata?.namespace && body.kind !== 'CustomResourceDefinition' && body.kind !== 'Provider') {
      body.metadata = { ...body.metadata, namespace };
    }
    await client.patch(body, undefined, undefined, 'latchkey', true, PatchStrategy.ServerSideApply);
  }
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
