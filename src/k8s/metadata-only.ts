import type { KubeConfig, RequestContext } from './kubernetes-client.js';

/** What client-go's metadata client asks for: objects' metadata only, as PartialObjectMetadata(List). */
const LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const WATCH = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

/**
 * A view of `kc` whose requests ask the API server for metadata only: a list answers with a
 * PartialObjectMetadataList, a watch with PartialObjectMetadata events. No spec or status crosses
 * the wire or enters a cache built on it. Everything else (cluster, credentials, the shared
 * connections of ./shared-dispatcher.ts) is `kc`'s.
 */
export function metadataOnly(kc: KubeConfig): KubeConfig {
  const view = Object.create(kc) as KubeConfig;
  view.applySecurityAuthentication = async (context: RequestContext) => {
    await kc.applySecurityAuthentication(context);
    const watch = new URL(context.getUrl()).searchParams.get('watch') === 'true';
    context.setHeaderParam('Accept', watch ? WATCH : LIST);
  };
  return view;
}
