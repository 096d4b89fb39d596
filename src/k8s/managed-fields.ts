/**
 * `metadata.managedFields` as a write that is not an apply sends it to drop the object's field
 * ownership records (Kubernetes' documented reset: a list of one empty entry; an empty list is
 * ignored). The API server then records only what that write and later ones change. Latchkey writes
 * its Connections and Secrets with Update operations under one field manager and never applies
 * them, so the records serve no conflict check; they were a third of each object in etcd.
 */
export const RESET_MANAGED_FIELDS: readonly object[] = [{}];
