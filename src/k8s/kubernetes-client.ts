/**
 * What Latchkey uses of @kubernetes/client-node, from one place. The build replaces the compiled
 * module with a bundle of just these (dev/build/bundle-kubernetes-client.mjs): the package's index
 * would load every generated API group into every process (about 13 MiB of heap each).
 * Types come from the package as they are.
 */
export {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  ServerConfiguration,
  createConfiguration,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  Watch,
} from '@kubernetes/client-node';
export type * from '@kubernetes/client-node';
