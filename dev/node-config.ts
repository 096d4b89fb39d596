/**
 * The configuration files of the local node (dev/local-node.ts), as text: containerd's, the CNI
 * network's and kubelet's. Pure functions of the node's layout, so a unit test can read what each
 * setting is and why without starting anything.
 */
import { join } from 'node:path';

/** Where the node lives and which addresses it uses; one per machine (fixed kubelet ports). */
export interface NodeLayout {
  /** Everything of the node's: containerd's root and state, kubelet's root, CNI config and IPAM, logs. */
  workDir: string;
  nodeName: string;
  /** The node bridge's /32 address: the node's InternalIP and the API server's address. */
  nodeAddress: string;
  nodeBridge: string;
  /** The pods' bridge and subnet (host-local IPAM); its first address is the pods' gateway. */
  podBridge: string;
  podCidr: string;
  serviceCidr: string;
  /** The locally built sandbox image (pause.c, FROM scratch). */
  sandboxImage: string;
  cniBinDir: string;
}

export const containerdSocket = (l: NodeLayout) => join(l.workDir, 'containerd', 'containerd.sock');
export const cniConfDir = (l: NodeLayout) => join(l.workDir, 'cni', 'net.d');
export const kubeletRootDir = (l: NodeLayout) => join(l.workDir, 'kubelet');
/** The cgroup parent of every pod: kubelet's QoS cgroups go under it, so stopping the node can find every pod's process. */
export const CGROUP_ROOT = '/latchkey-node';

/** containerd with its own root, state and socket (not the system's), and the CRI settings this machine needs. */
export function containerdConfig(l: NodeLayout): string {
  const dir = join(l.workDir, 'containerd');
  return `version = 2
root = "${join(dir, 'root')}"
state = "${join(dir, 'state')}"
[grpc]
  address = "${containerdSocket(l)}"
[ttrpc]
  address = "${join(dir, 'containerd.sock.ttrpc')}"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  # Built locally from pause.c and imported: nothing is pulled.
  sandbox_image = "${l.sandboxImage}"
  # This machine's bounding set lacks CAP_SYS_RESOURCE: runc cannot lower oom_score_adj below its
  # own ("nsexec: failed to update /proc/self/oom_score_adj: Permission denied"), so containerd keeps it at least as high.
  restrict_oom_score_adj = true
  # Network namespaces under the state directory, so stopping the node finds and removes them.
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  enable_selinux = false
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        # No systemd here: kubelet uses the cgroupfs driver, and so must runc.
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${l.cniBinDir}"
    # Our own directory: podman's networks are in /etc/cni/net.d.
    conf_dir = "${cniConfDir(l)}"
`;
}

/** The pods' network: a bridge with host-local addresses, hairpin on (a pod reaching itself through its Service). */
export function cniNetwork(l: NodeLayout): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'latchkey-pods',
      plugins: [
        {
          type: 'bridge',
          bridge: l.podBridge,
          isGateway: true,
          // No masquerading: pod traffic never leaves the machine (the node drops it, dev/node-host.ts).
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: l.podCidr }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: join(l.workDir, 'cni', 'ipam'),
          },
        },
        { type: 'loopback' },
      ],
    },
    null,
    2,
  );
}

export interface KubeletFiles {
  clientCaFile: string;
  resolvConf: string;
}

/** kubelet's KubeletConfiguration (JSON is YAML), for this machine's hybrid cgroup v1 without systemd. */
export function kubeletConfig(l: NodeLayout, files: KubeletFiles): string {
  return JSON.stringify(
    {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      containerRuntimeEndpoint: `unix://${containerdSocket(l)}`,
      address: l.nodeAddress,
      healthzBindAddress: '127.0.0.1',
      // kubelet 1.36 refuses cgroup v1 unless told; this machine has hybrid v1 cgroups and no systemd.
      failCgroupV1: false,
      cgroupDriver: 'cgroupfs',
      cgroupRoot: CGROUP_ROOT,
      failSwapOn: false,
      // kubelet writes vm.overcommit_memory, kernel.panic and kernel.panic_on_oops on the host unless
      // told they are already right; dev/node-host.ts saves them first and restores them on stop.
      protectKernelDefaults: false,
      resolvConf: files.resolvConf,
      // Containers' logs under the node's directory, not /var/log/pods.
      podLogsDir: join(l.workDir, 'pod-logs'),
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: true },
        // The API server's kubelet client certificate (kubectl logs, exec).
        x509: { clientCAFile: files.clientCaFile },
      },
      authorization: { mode: 'Webhook' },
      // Test data on a shared disk: only evict when it is really full.
      evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '2%', 'imagefs.available': '2%', 'nodefs.inodesFree': '2%' },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      // Images are imported, never pulled (imagePullPolicy Never or IfNotPresent): keep them all.
      serializeImagePulls: false,
      maxPods: 60,
      podCIDR: l.podCidr,
      // The pods reach the host's addresses; a cluster DNS is not part of the local node.
      clusterDomain: 'cluster.local',
      // Fixed ports (10250 for the API server, 10248 healthz): one node per machine.
      port: 10250,
      readOnlyPort: 0,
      rotateCertificates: false,
      serverTLSBootstrap: false,
      nodeStatusUpdateFrequency: '4s',
      syncFrequency: '10s',
    },
    null,
    2,
  );
}
