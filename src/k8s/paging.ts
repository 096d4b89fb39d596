import type { KubernetesListObject, KubernetesObject } from './kubernetes-client.js';

/** Objects per page of a list: no answer carries (and nothing holds) a whole collection. */
export const LIST_PAGE = 500;

/** One page of a list (`limit`/`continue`, one consistent snapshot). */
export type ListPage<T extends KubernetesObject> = (limit: number, _continue: string | undefined) => Promise<KubernetesListObject<T>>;

/**
 * The one way a list is read page by page: each page yielded as it arrives, the next asked for only
 * after the caller is done with it. The informers' initial lists and the connection scans go through it.
 */
export async function* listPages<T extends KubernetesObject>(
  page: ListPage<T>,
  limit = LIST_PAGE,
): AsyncGenerator<KubernetesListObject<T>> {
  let next: string | undefined;
  do {
    const list = await page(limit, next);
    yield list;
    next = continueOf(list);
  } while (next);
}

/**
 * The continue token of a list page: `_continue` once client-node has deserialized a typed list
 * (Secrets), `continue` as the API server sent it in the raw JSON of a custom object list
 * (Connections). Reading only the first stopped every custom object list at its first page.
 */
export function continueOf(list: KubernetesListObject<KubernetesObject>): string | undefined {
  const metadata = list.metadata as { _continue?: string; continue?: string } | undefined;
  return metadata?._continue || metadata?.continue || undefined;
}
