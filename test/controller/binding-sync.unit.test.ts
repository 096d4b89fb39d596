/**
 * BindingSync decides which CredentialBindings this replica syncs and when: only those whose
 * connection it owns, again when that connection changes, not for a status-only change of the
 * binding, and per ownership after a membership change. The reconciler is a recording seam here (the
 * binding tests in test/bindings/ run the real one against the control plane).
 */
import { Registry } from '../../src/platform/metrics.js';
import { BindingSync, bindingConnectionKey } from '../../src/controller/binding-sync.js';
import { controllerMetrics } from '../../src/controller/metrics.js';
import { connectionObjectName } from '../../src/k8s/names.js';
import type { CredentialBindingResource } from '../../src/k8s/resources.js';
import { testLogger } from '../../dev/cluster.js';

function binding(name: string, connectionId: string, generation = 1): CredentialBindingResource {
  return {
    apiVersion: 'latchkey.dev/v1alpha1',
    kind: 'CredentialBinding',
    metadata: { name, namespace: 'app', generation },
    spec: { connectionRef: { namespace: 'env', integration: 'github', connectionId } },
  };
}

function bed(owned: Set<string>) {
  const bindings = new Map<string, CredentialBindingResource>();
  const synced: string[] = [];
  const sync = new BindingSync({
    bindings: { get: (ns, name) => bindings.get(`${ns}/${name}`), list: () => [...bindings.values()] },
    reconciler: {
      reconcile: async (ns, name) => {
        synced.push(`${ns}/${name}`);
        return {};
      },
    },
    owns: (key) => owned.has(key),
    logger: testLogger(),
    metrics: controllerMetrics(new Registry()),
  });
  const put = (b: CredentialBindingResource) => bindings.set(`${b.metadata.namespace}/${b.metadata.name}`, b);
  return { sync, synced, put };
}

const key = (connectionId: string) => `env/${connectionObjectName('github', connectionId)}`;

it('names the connection by the key sharding hashes', () => {
  expect(bindingConnectionKey(binding('b', 'user-1'))).toBe(key('user-1'));
});

it('syncs a new binding only on the replica that owns its connection', async () => {
  const { sync, synced, put } = bed(new Set([key('mine')]));
  const mine = binding('mine', 'mine');
  const theirs = binding('theirs', 'theirs');
  put(mine);
  put(theirs);
  sync.bindingChanged(mine, 'add');
  sync.bindingChanged(theirs, 'add');
  await sync.queue.idle();
  expect(synced).toEqual(['app/mine']);
  await sync.stop();
});

it('syncs again when its connection changes, and not for a change of its status alone', async () => {
  const { sync, synced, put } = bed(new Set([key('c1')]));
  const b = binding('b', 'c1');
  put(b);
  sync.bindingChanged(b, 'add');
  await sync.queue.idle();
  sync.bindingChanged({ ...b, status: { secretName: 'b' } }, 'update');
  await sync.queue.idle();
  expect(synced).toEqual(['app/b']);
  sync.connectionChanged(key('c1'));
  await sync.queue.idle();
  sync.connectionChanged(key('other'));
  await sync.queue.idle();
  expect(synced).toEqual(['app/b', 'app/b']);
  const edited = binding('b', 'c1', 2);
  put(edited);
  sync.bindingChanged(edited, 'update');
  await sync.queue.idle();
  expect(synced).toHaveLength(3);
  await sync.stop();
});

it('after a membership change syncs what it owns now and drops what it no longer owns', async () => {
  const owned = new Set([key('a')]);
  const { sync, synced, put } = bed(owned);
  put(binding('a', 'a'));
  put(binding('b', 'b'));
  owned.delete(key('a'));
  owned.add(key('b'));
  sync.enqueueOwned();
  await sync.queue.idle();
  expect(synced).toEqual(['app/b']);
  // A connection this replica no longer owns: its change is not this replica's work.
  sync.connectionChanged(key('a'));
  await sync.queue.idle();
  expect(synced).toEqual(['app/b']);
  await sync.stop();
});

it('an Environment change brings back the bindings of its namespace this replica owns', async () => {
  const { sync, synced, put } = bed(new Set([key('a'), key('b')]));
  put(binding('a', 'a'));
  put({ ...binding('b', 'b'), spec: { connectionRef: { namespace: 'elsewhere', integration: 'github', connectionId: 'b' } } });
  sync.environmentChanged('env');
  await sync.queue.idle();
  expect(synced).toEqual(['app/a']);
  await sync.stop();
});
