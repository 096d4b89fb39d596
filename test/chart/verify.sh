#!/usr/bin/env bash
# Offline checks of the Helm chart (charts/latchkey):
#   1. the chart's copies of crds/ and config/providers/ are up to date (sync-crds.sh --check)
#   2. values.schema.json rejects a misspelt value; template guards fire
#   3. helm lint --strict, with the default values and every charts/latchkey/ci/*.yaml
#   4. helm template of the same value sets (plus the catalog both as first-install hooks
#      and as ordinary resources), and assertions on what is rendered
#   5. kubeconform -strict on everything rendered, against JSON schemas generated here
#   6. optional, when KUBECONFIG is set: helm install --dry-run=server against that cluster
#      (rendering with its capabilities; the real install is in test/chart/chart.test.ts)
#
# Tools: helm and kubeconform come from test/chart/tools.sh (also used by chart.test.ts), which
# builds them with `go install` (the Go module proxy is reachable, their release downloads are
# not) into a cache outside the repository keyed by version:
#   ${LATCHKEY_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/latchkey/tools}/<tool>-<version>/
# Only the first run builds them (helm takes a few minutes on 2 cores).
#
# Schemas, offline: kubeconform normally downloads JSON schemas from GitHub, which is not
# reachable. Instead test/chart/schemagen (a small Go program) converts
#   - the Kubernetes OpenAPI document api/openapi-spec/swagger.json of the k8s.io/kubernetes
#     Go module (the version the local control plane in dev/controlplane builds; the module
#     is in the Go module cache already, or `go mod download` fetches it), and
#   - this project's CRDs (crds/*.yaml) and a hand-written subset of the Prometheus
#     Operator's ServiceMonitor (test/chart/schemas/), which is not available offline,
# into strict, self-contained JSON schemas (additionalProperties: false wherever the API
# lists properties, as kubeconform's published -strict schemas), and kubeconform reads them
# with -schema-location. A kind with no schema is an error (no -ignore-missing-schemas).
# Not checked offline: CEL rules (x-kubernetes-validations), defaulting and admission;
# the in-cluster checks cover those.
#
# Environment:
#   KUBECONFIG            also run `helm install --dry-run=server` against that cluster
#   LATCHKEY_K8S_VERSION  Kubernetes version of the schemas (default: from dev/controlplane/go.mod)
#   LATCHKEY_TOOLS_CACHE  where the tools are built (see above)
# Works with CI=true and no standard input; idempotent (all output goes to a temp dir).
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
chart="$repo/charts/latchkey"
here="$repo/test/chart"
# shellcheck source=tools.sh
source "$here/tools.sh"
tools="$LATCHKEY_TOOLS_DIR"
release=latchkey
namespace=latchkey-system

k8s_version="${LATCHKEY_K8S_VERSION:-}"
if [ -z "$k8s_version" ] && [ -f "$repo/dev/controlplane/go.mod" ]; then
  k8s_version="$(awk '$1=="k8s.io/kubernetes" {print $2; exit}' "$repo/dev/controlplane/go.mod")"
fi
k8s_version="${k8s_version:-v1.36.3}"
kube_version="${k8s_version#v}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "  ok   $*"; }
fail() { failed=$((failed + 1)); echo "  FAIL $*"; }
step() { echo; echo "== $*"; }

command -v go >/dev/null 2>&1 || { echo "verify: Go is needed (to build helm, kubeconform and schemagen)" >&2; exit 1; }

step "tools"
helm="$(latchkey_tool helm)"
kubeconform="$(latchkey_tool kubeconform)"
# schemagen is keyed by the hash of its sources, so an edit rebuilds it.
schemagen_key="$(cat "$here/schemagen/go.mod" "$here/schemagen/go.sum" "$here/schemagen/main.go" | sha256sum | cut -c1-12)"
schemagen_dir="$tools/schemagen-$schemagen_key"
if [ ! -x "$schemagen_dir/schemagen" ]; then
  echo "building schemagen..." >&2
  mkdir -p "$schemagen_dir.tmp.$$"
  (cd "$here/schemagen" && go build -o "$schemagen_dir.tmp.$$/schemagen" .) >&2
  rm -rf "$schemagen_dir"
  mv "$schemagen_dir.tmp.$$" "$schemagen_dir"
fi
schemagen="$schemagen_dir/schemagen"
echo "helm $LATCHKEY_HELM_VERSION: $helm"
echo "kubeconform $LATCHKEY_KUBECONFORM_VERSION: $kubeconform"
echo "Kubernetes schemas: $k8s_version"

step "chart copies of crds/ and config/providers/ (charts/latchkey/sync-crds.sh --check)"
if "$chart/sync-crds.sh" --check; then pass "copies are up to date"; else fail "copies are stale: run charts/latchkey/sync-crds.sh"; fi

step "JSON schemas for kubeconform (offline)"
k8s_dir="$(cd "$work" && go mod download -json "k8s.io/kubernetes@$k8s_version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
swagger="$k8s_dir/api/openapi-spec/swagger.json"
[ -f "$swagger" ] || { echo "verify: no $swagger (go mod download k8s.io/kubernetes@$k8s_version failed?)" >&2; exit 1; }
schemas="$work/schemas"
crd_args=()
for f in "$repo"/crds/latchkey.dev_*.yaml "$here"/schemas/*.crd.yaml; do crd_args+=(-crd "$f"); done
"$schemagen" -swagger "$swagger" -out "$schemas" "${crd_args[@]}"
schema_location="$schemas/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"
kc() { "$kubeconform" -strict -summary -output text -schema-location "$schema_location" "$@"; }

# The validation must bite: a misspelt field in a core kind and in a Latchkey kind is rejected,
# an unknown kind is an error, and the same objects spelt right pass.
cat >"$work/bad.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  replica: 2
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec: {containers: [{name: c, image: i}]}
---
apiVersion: latchkey.dev/v1alpha1
kind: Provider
metadata: {name: bad}
spec: {displayName: Bad, authMode: API_KEY, proxy: {baseURL: "https://x"}}
YAML
sed -e 's/replica: 2/replicas: 2/' -e 's/baseURL/baseUrl/' "$work/bad.yaml" >"$work/good.yaml"
if kc "$work/bad.yaml" >"$work/bad.out" 2>&1; then fail "kubeconform accepted misspelt fields"; cat "$work/bad.out"
elif [ "$(grep -c 'additional properties' "$work/bad.out")" -eq 2 ]; then pass "kubeconform rejects misspelt fields (Deployment spec.replica, Provider spec.proxy.baseURL)"
else fail "kubeconform failed for another reason:"; cat "$work/bad.out"; fi
if kc "$work/good.yaml" >"$work/good.out" 2>&1; then pass "kubeconform accepts the same objects spelt right"; else fail "kubeconform rejected valid objects:"; cat "$work/good.out"; fi
printf 'apiVersion: example.com/v1\nkind: Unknown\nmetadata: {name: x}\n' >"$work/unknown.yaml"
if kc "$work/unknown.yaml" >/dev/null 2>&1; then fail "kubeconform accepted a kind without schema"; else pass "a kind without schema is an error"; fi

step "values.schema.json and template guards"
# expect_render_failure DESCRIPTION PATTERN ARGS...: helm template must fail with PATTERN in its error.
expect_render_failure() {
  local desc="$1" pattern="$2"
  shift 2
  if "$helm" template "$release" "$chart" -n "$namespace" --kube-version "$kube_version" "$@" >"$work/neg.out" 2>&1; then
    fail "$desc: helm template succeeded"
  elif grep -qiE "$pattern" "$work/neg.out"; then
    pass "$desc"
  else
    fail "$desc: unexpected error:"; cat "$work/neg.out"
  fi
}
expect_render_failure "a misspelt value (image.tagg) is rejected" "additional properties 'tagg' not allowed|tagg" --set image.tagg=x
expect_render_failure "a misspelt nested value (config.leaderElection.leaseNme) is rejected" "leaseNme" --set config.leaderElection.leaseNme=x
expect_render_failure "a wrong type (controller.replicas: \"three\") is rejected" "replicas" --set-string controller.replicas=three
expect_render_failure "the single replicaCount of the one-Deployment chart is refused (controller.replicas, server.replicas)" "replicaCount" --set replicaCount=2
expect_render_failure "an unknown log level is rejected" "logLevel" --set config.logLevel=verbose
expect_render_failure "controller.replicas > 1 without leader election is refused" "leaderElection" --set config.leaderElection.enabled=false
expect_render_failure "restricted egress without API server CIDRs is refused" "apiServerCidrs" --set networkPolicy.enabled=true --set networkPolicy.egress.restrict=true
expect_render_failure "an ingress without hosts is refused" "ingress.hosts" --set ingress.enabled=true --set 'ingress.hosts=null'

# Value sets: the defaults, and every file in charts/latchkey/ci/.
sets=("default|")
for f in "$chart"/ci/*.yaml; do sets+=("$(basename "$f" .yaml)|$f"); done

step "helm lint --strict"
for s in "${sets[@]}"; do
  name="${s%%|*}"; file="${s#*|}"
  args=(); [ -n "$file" ] && args=(-f "$file")
  if "$helm" lint "$chart" --strict --kube-version "$kube_version" -n "$namespace" "${args[@]}" >"$work/lint.out" 2>&1; then
    pass "lint ($name values)"
  else
    fail "lint ($name values):"; cat "$work/lint.out"
  fi
done

step "helm template"
render() { # render NAME ARGS...
  local name="$1"; shift
  if "$helm" template "$release" "$chart" -n "$namespace" --kube-version "$kube_version" "$@" >"$work/rendered-$name.yaml" 2>"$work/render.err"; then
    pass "template ($name): $(grep -c '^kind:' "$work/rendered-$name.yaml") objects"
  else
    fail "template ($name):"; cat "$work/render.err"
    : >"$work/rendered-$name.yaml"
  fi
}
for s in "${sets[@]}"; do
  name="${s%%|*}"; file="${s#*|}"
  args=(); [ -n "$file" ] && args=(-f "$file")
  render "$name" "${args[@]}"
done
# An upgrade, when the Provider CRD exists: the catalog renders as ordinary resources.
render upgrade --api-versions latchkey.dev/v1alpha1/Provider
# The catalog machinery with a sample provider, whether or not config/providers/ has any yet.
cp -r "$chart" "$work/chart-sample"
find "$work/chart-sample/catalog" -name '*.yaml' -delete
cat >"$work/chart-sample/catalog/sample.yaml" <<'YAML'
apiVersion: latchkey.dev/v1alpha1
kind: Provider
metadata:
  name: sample-oauth
spec:
  displayName: Sample
  authMode: OAUTH2
  authorizationUrl: https://auth.example.com/authorize
  tokenUrl: https://auth.example.com/token
---
apiVersion: latchkey.dev/v1alpha1
kind: Provider
metadata:
  name: sample-key
spec:
  displayName: Sample key
  authMode: API_KEY
YAML
"$helm" template "$release" "$work/chart-sample" -n "$namespace" --kube-version "$kube_version" --set 'catalog.exclude={sample-key}' >"$work/rendered-sample-catalog.yaml"

step "assertions on the rendered manifests"
# count_docs FILE KIND [NAME_OR_GREP]: number of documents of KIND (containing the extended regex, if given).
count_docs() {
  awk -v kind="$2" -v re="${3:-}" '
    function flush() { if (doc ~ ("\nkind: " kind "\n") && (re == "" || doc ~ re)) n++; doc = "\n" }
    BEGIN { doc = "\n"; n = 0 }
    /^---/ { flush(); next }
    { doc = doc $0 "\n" }
    END { flush(); print n }' "$1"
}
# doc_of FILE KIND NAME: print the first document of KIND named NAME.
doc_of() {
  awk -v kind="$2" -v name="$3" '
    function flush() { if (!done && doc ~ ("\nkind: " kind "\n") && doc ~ ("\n  name: " name "\n")) { printf "%s", doc; done = 1 } doc = "\n" }
    BEGIN { doc = "\n" }
    /^---/ { flush(); next }
    { doc = doc $0 "\n" }
    END { flush() }' "$1"
}
check() { # check DESCRIPTION COMMAND...
  local desc="$1"; shift
  if "$@"; then pass "$desc"; else fail "$desc"; fi
}
eq() { [ "$1" = "$2" ] || { echo "       expected $2, got $1"; return 1; }; }

d="$work/rendered-default.yaml"
p="$work/rendered-production-values.yaml"
n_crds="$(ls "$repo"/crds/latchkey.dev_*.yaml | wc -l)"
n_catalog="$(find "$chart/catalog" -name '*.yaml' | wc -l)"
check "default: the $n_crds CRDs are rendered, with helm.sh/resource-policy: keep" eq "$(count_docs "$d" CustomResourceDefinition 'helm.sh/resource-policy: keep')" "$n_crds"
"$helm" template "$release" "$chart" -n "$namespace" --kube-version "$kube_version" --set crds.keep=false --show-only templates/crds.yaml \
  | grep -vE '^(---|# Source: .*|)$' >"$work/crds-rendered.yaml"
for f in "$repo"/crds/latchkey.dev_*.yaml; do grep -vE '^(---|)$' "$f"; done >"$work/crds-source.yaml"
check "the rendered CRDs are the files of crds/ unchanged (crds.keep=false)" diff -u "$work/crds-source.yaml" "$work/crds-rendered.yaml"
check "crds.install=false renders no CRD" eq "$("$helm" template "$release" "$chart" -n "$namespace" --kube-version "$kube_version" --set crds.install=false | grep -c '^kind: CustomResourceDefinition' || true)" 0
check "default: two Deployments (controller, server)" eq "$(count_docs "$d" Deployment)" 2
controller="$(doc_of "$d" Deployment "$release-controller")"
server="$(doc_of "$d" Deployment "$release-server")"
check "controller Deployment: args [controller], 2 replicas, selects component=controller" eq \
  "$(grep -cE '^  replicas: 2$|args: \["controller"\]|^      app.kubernetes.io/component: controller$' <<<"$controller")" 3
check "server Deployment: args [server], 1 replica, selects component=server" eq \
  "$(grep -cE '^  replicas: 1$|args: \["server"\]|^      app.kubernetes.io/component: server$' <<<"$server")" 3
# Each Service selects one component (label and selector: two lines each), so `kubectl port-forward svc/...` reaches a pod with the port.
check "the Service $release selects the server pods only" eq "$(grep -cE 'component: server$' <<<"$(doc_of "$d" Service "$release")")/$(grep -c 'component: controller' <<<"$(doc_of "$d" Service "$release")")" 2/0
check "the Service $release-controller selects the controller pods only" eq "$(grep -cE 'component: controller$' <<<"$(doc_of "$d" Service "$release-controller")")/$(grep -c 'component: server' <<<"$(doc_of "$d" Service "$release-controller")")" 2/0
# The heap flag follows each container's own memory limit (75 %): 768Mi -> 576, 1Gi -> 768; the young generation nodeSemiSpaceSizeMiB.
check "controller: NODE_OPTIONS --max-old-space-size=576 (75% of 768Mi)" grep -q 'value: "--max-old-space-size=576 --max-semi-space-size=4"' <<<"$controller"
check "server: NODE_OPTIONS --max-old-space-size=768 (75% of 1Gi)" grep -q 'value: "--max-old-space-size=768 --max-semi-space-size=4"' <<<"$server"
check "no young-generation flag with --set nodeSemiSpaceSizeMiB=0" grep -q 'value: "--max-old-space-size=576"$' \
  <<<"$("$helm" template "$release" "$chart" -n "$namespace" --kube-version "$kube_version" --set nodeSemiSpaceSizeMiB=0 -s templates/deployment.yaml)"
check "heap flag per container with --set controller.resources.limits.memory=2Gi" grep -q 'value: "--max-old-space-size=1536 --max-semi-space-size=4"' \
  <<<"$("$helm" template "$release" "$chart" -n "$namespace" --kube-version "$kube_version" --set controller.resources.limits.memory=2Gi -s templates/deployment.yaml)"
for deploy in "$controller" "$server"; do
  name="$(grep -m1 -oE 'args: \["[a-z]+"\]' <<<"$deploy" | grep -oE '"[a-z]+"' | tr -d '"')"
  check "$name: /healthz startup and liveness probes, /readyz readiness probe" eq "$(grep -cE 'path: /(healthz|readyz)' <<<"$deploy")$(grep -cE '^          (startup|liveness|readiness)Probe:$' <<<"$deploy")" 33
  # "text|occurrences": the pod security context repeats three of them once more.
  for kv in 'readOnlyRootFilesystem: true|1' 'allowPrivilegeEscalation: false|1' '- ALL|1' 'mountPath: /tmp|1' \
    'runAsNonRoot: true|2' 'runAsUser: 65532|2' 'type: RuntimeDefault|2'; do
    k="${kv%|*}"
    check "$name security: '$k' in the pod and the container" eq "$(grep -cF -- "$k" <<<"$deploy")" "${kv##*|}"
  done
  for v in LATCHKEY_HTTP_PORT LATCHKEY_CONTROLLER_PORT LATCHKEY_PUBLIC_BASE_URL LATCHKEY_LOG_LEVEL LATCHKEY_WATCH_NAMESPACES \
    LATCHKEY_REFRESH_MARGIN_SECONDS LATCHKEY_REFRESH_MARGIN_RATIO LATCHKEY_REFRESH_FLOOR_SECONDS LATCHKEY_LEADER_ELECTION LATCHKEY_LEASE_NAME LATCHKEY_LEASE_NAMESPACE \
    LATCHKEY_LEASE_DURATION_SECONDS POD_NAME POD_NAMESPACE LATCHKEY_SESSION_TTL_SECONDS LATCHKEY_WEBHOOK_MAX_ATTEMPTS \
    LATCHKEY_WEBHOOK_BACKOFF_BASE_SECONDS LATCHKEY_WEBHOOK_BACKOFF_MAX_SECONDS; do
    [ "$(grep -c -- "- name: $v\$" <<<"$deploy")" = 1 ] || { fail "$name: env $v missing"; continue; }
  done
  pass "$name env: every LATCHKEY_* setting, POD_NAME and POD_NAMESPACE"
done
check "default: a PodDisruptionBudget for the 2 controllers, none for the 1 server" eq \
  "$(count_docs "$d" PodDisruptionBudget)$(count_docs "$d" PodDisruptionBudget 'name: latchkey-controller\n')" 11
check "default: the controllers' budget keeps one of two (maxUnavailable 1, component=controller)" eq \
  "$(grep -cE '^  maxUnavailable: 1$|^      app.kubernetes.io/component: controller$' <<<"$(doc_of "$d" PodDisruptionBudget "$release-controller")")" 2
check "production: a PodDisruptionBudget per Deployment (3 replicas each)" eq "$(count_docs "$p" PodDisruptionBudget)" 2
check "server.replicas=1 and controller.replicas=1: no PodDisruptionBudget" eq \
  "$("$helm" template "$release" "$chart" -n "$namespace" --kube-version "$kube_version" --set controller.replicas=1 | grep -c '^kind: PodDisruptionBudget' || true)" 0
check "default: namespaced rights cluster-wide (ClusterRole + ClusterRoleBinding for them, Providers, token and access reviews, CredentialBindings and Namespace get)" eq "$(count_docs "$d" ClusterRoleBinding)" 5
check "default: LATCHKEY_WATCH_NAMESPACES empty" grep -qE '^ *value: ""$' <<<"$(grep -A1 'name: LATCHKEY_WATCH_NAMESPACES' "$d")"
check "production: only the Providers, the reviews and the Namespace-get ClusterRoleBindings are cluster-wide" eq "$(count_docs "$p" ClusterRoleBinding)" 3
check "production: Namespace get limited to rbac.namespaces by name" grep -q 'resourceNames: \["shop-prod","billing-prod"\]' <<<"$(doc_of "$p" ClusterRole "$namespace-$release-binding-namespaces")"
check "production: a Role and RoleBinding in each of rbac.namespaces (Latchkey's, CredentialBindings')" eq "$(count_docs "$p" RoleBinding 'namespace: (shop-prod|billing-prod)\n')" 4
check "production: LATCHKEY_WATCH_NAMESPACES=shop-prod,billing-prod" grep -q 'value: "shop-prod,billing-prod"' "$p"
check "leader election: Lease get/update limited to its name" grep -q 'resourceNames: \["latchkey-controller"\]' "$d"
check "RBAC: no Pod or wildcard rights" eq "$(grep -cE 'resources: \[pods|"\*"|\[\*\]' "$d" "$p" | awk -F: '{s+=$2} END {print s}')" 0
ingress="$(doc_of "$p" Ingress "$release")"
check "production ingress: no /connect prefix (it would publish POST /connect/sessions)" eq "$(grep -cE '^ *- path: /connect$' <<<"$ingress")" "1"
check "production ingress: the Connect UI API and the OAuth callback" eq "$(grep -E '^ *- path: (/connect/api|/oauth/callback)$' <<<"$ingress" | sort -u | tr -d ' ' | tr '\n' ' ')" "-path:/connect/api -path:/oauth/callback "
check "production ingress: TLS; public base URL https://connect.example.com" grep -q 'value: "https://connect.example.com"' "$p"
check "default: no Ingress, NetworkPolicy or ServiceMonitor" eq "$(( $(count_docs "$d" Ingress) + $(count_docs "$d" NetworkPolicy) + $(count_docs "$d" ServiceMonitor) ))" 0
check "production: NetworkPolicy and ServiceMonitor (both ports)" eq "$(count_docs "$p" NetworkPolicy)$(count_docs "$p" ServiceMonitor)$(grep -cE '^    - port: (http|metrics)$' <<<"$(doc_of "$p" ServiceMonitor "$release")")" 112
n_providers="$(cat "$chart"/catalog/*.yaml /dev/null | grep -c '^kind: Provider')"
# On a first install the catalog is the items of one List (a single post-install hook); on an upgrade, ordinary documents.
check "catalog on first install: every provider of catalog/ ($n_catalog files) an item of one List" eq "$(count_docs "$d" List)/$(doc_of "$d" List "$release-catalog" | grep -c '^    kind: Provider$')" "1/$n_providers"
check "catalog on upgrade: every provider of catalog/ a document of its own" eq "$(count_docs "$work/rendered-upgrade.yaml" Provider)" "$n_providers"
check "catalog on first install: one post-install hook, its items with release ownership metadata" eq "$(count_docs "$work/rendered-sample-catalog.yaml" List '\n  annotations:\n    helm.sh/hook: post-install\n(.*\n)*.*meta.helm.sh/release-name: latchkey\n')/$(doc_of "$work/rendered-sample-catalog.yaml" List "$release-catalog" | grep -c '^    kind: Provider$')" 1/1
check "catalog.exclude leaves sample-key out" eq "$(grep -c 'name: sample-key$' "$work/rendered-sample-catalog.yaml" || true)" 0
check "catalog on upgrade (CRD present): ordinary resources, no hooks, no List" eq "$(grep -c 'helm.sh/hook' "$work/rendered-upgrade.yaml" || true)$(count_docs "$work/rendered-upgrade.yaml" List)" 00
check "catalog.install=false renders no Provider" eq "$("$helm" template "$release" "$chart" -n "$namespace" --kube-version "$kube_version" --set catalog.install=false | grep -cE '^kind: (Provider|List)$' || true)" 0

step "kubeconform -strict (Kubernetes $k8s_version, Latchkey CRDs, ServiceMonitor subset)"
for f in "$work"/rendered-*.yaml; do
  name="$(basename "$f" .yaml)"; name="${name#rendered-}"
  if kc "$f" >"$work/kc.out" 2>&1; then
    pass "kubeconform ($name): $(tail -1 "$work/kc.out")"
  else
    fail "kubeconform ($name):"; cat "$work/kc.out"
  fi
done

# In-cluster checks are in test/chart/chart.test.ts (real helm install/upgrade/uninstall into the
# local control plane, every object accepted by the API server; RBAC by impersonation).
# Here, only when KUBECONFIG is set: `helm install --dry-run=server`, which renders with the
# cluster's capabilities (API versions, lookups) and its Kubernetes version (kubeVersion), without
# creating anything. Helm 4 does NOT submit the objects in a dry run, so this is no validation by
# the API server. --take-ownership: a cluster that already has the Latchkey CRDs (applied with
# kubectl, or by another release) would otherwise stop the dry run at the ownership check.
if [ -n "${KUBECONFIG:-}" ]; then
  step "helm install --dry-run=server (KUBECONFIG=$KUBECONFIG)"
  if "$helm" list -A --max 1 >"$work/dry.out" 2>&1; then
    # The ServiceMonitor needs the Prometheus Operator's CRD; leave it out where the cluster lacks it.
    sm_args=()
    if command -v kubectl >/dev/null 2>&1 && ! kubectl api-resources --api-group=monitoring.coreos.com -o name 2>/dev/null | grep -q '^servicemonitors'; then
      echo "(the cluster has no monitoring.coreos.com ServiceMonitor: dry runs use serviceMonitor.enabled=false)"
      sm_args=(--set serviceMonitor.enabled=false)
    fi
    for s in "${sets[@]}"; do
      name="${s%%|*}"; file="${s#*|}"
      args=(); [ -n "$file" ] && args=(-f "$file")
      if "$helm" install "$release" "$chart" -n "$namespace" --dry-run=server --take-ownership "${args[@]}" "${sm_args[@]}" >"$work/dry.out" 2>&1; then
        pass "helm install --dry-run=server ($name values)"
      else
        fail "helm install --dry-run=server ($name values):"; grep -v '^  ' "$work/dry.out" | tail -5
      fi
    done
  else
    fail "the cluster of KUBECONFIG is not reachable:"; tail -5 "$work/dry.out"
  fi
else
  echo
  echo "(KUBECONFIG not set: skipping helm install --dry-run=server)"
fi

echo
echo "chart: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
