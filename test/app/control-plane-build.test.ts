/**
 * The control plane build's progress, from the lines `go build -v` prints (the build itself runs in
 * the global setup of every test run; these are the lines of a first build, abridged).
 */
import { BuildProgress, formatElapsed } from '../../dev/control-plane-build.js';

it('follows a first build: download, the API server binaries, then etcd', () => {
  const p = new BuildProgress();
  const seen: string[] = [];
  const feed = (line: string) => p.line(line) && seen.push(p.step);
  feed('building kube-apiserver, kube-controller-manager and etcd v1.36.3 (first run only; several minutes)...');
  expect(p.started).toBe(true);
  feed('go: downloading k8s.io/api v0.36.3');
  feed('go: downloading github.com/spf13/cobra v1.9.1');
  expect(p.describe(5_000)).toBe('building the control plane: downloading Go modules (2 modules, 5s elapsed)');
  feed('internal/goarch');
  feed('k8s.io/apimachinery/pkg/util/sets');
  feed('k8s.io/kubernetes/cmd/kube-apiserver');
  expect(p.step).toBe('kube-apiserver and kube-controller-manager');
  feed('k8s.io/kubernetes/cmd/kube-controller-manager');
  feed('go.etcd.io/etcd/server/v3/embed');
  expect(p.describe(125_000)).toBe('building the control plane: etcd (5 packages compiled, 2m05s elapsed)');
  expect(seen).toEqual(['downloading Go modules', 'kube-apiserver and kube-controller-manager', 'etcd']);
});

it('with a warm Go cache only says what it builds and for how long', () => {
  const p = new BuildProgress();
  p.line('building kube-apiserver, kube-controller-manager and etcd v1.36.3 (first run only; several minutes)...');
  expect(p.describe(61_000)).toBe('building the control plane: kube-apiserver, kube-controller-manager and etcd (1m01s elapsed)');
  expect(formatElapsed(9_400)).toBe('9s');
});
