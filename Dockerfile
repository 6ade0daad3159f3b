# The service's image (docs/deployment.md, "Containers"): `docker build -t animal-store .` or
# `podman build -t animal-store .`. The build stage is the official Node 24 image; the image itself
# starts from nothing and holds Node, the C libraries Node links, the bundle and the packages the
# bundle loads: no shell, no package manager, about 200 MB where the slim Node image alone is 240.
# NODE_IMAGE can name any Debian-based image with Node 24 at /usr/local/bin/node and npm, such as
# the stand-in CI builds with no registry to pull from (.ci/node-base-image.sh).
ARG NODE_IMAGE=docker.io/library/node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
# Extra CA certificates for npm behind an intercepting proxy: an argument of this stage only, so
# they never reach the image.
ARG NODE_EXTRA_CA_CERTS
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: nothing needs compiling. better-sqlite3 13 ships its binary, esbuild and SWC
# come as platform packages, and the Node 20 driver is never used here.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.mjs scripts/bundle-externals.mjs scripts/swc-typescript.mjs scripts/image-node-modules.mjs scripts/
COPY src src
RUN node scripts/build.mjs \
 && node scripts/image-node-modules.mjs /image/app \
 && cp -r dist package.json /image/app/
# Node and the shared libraries it and better-sqlite3 link, found where the dynamic loader looks;
# the one user (a fixed uid, as Kubernetes' runAsNonRoot checks) and the data directory it owns.
RUN mkdir -p /image/usr/local/bin /image/etc /image/data \
 && cp /usr/local/bin/node /image/usr/local/bin/ \
 && for lib in $(ldd /usr/local/bin/node /image/app/node_modules/better-sqlite3/prebuilds/*.node \
      | grep -o '/[^ ]*\.so[^ ]*' | sort -u); do cp -L --parents "$lib" /image; done \
 && echo 'app:x:65532:65532:animal-store:/nonexistent:/nonexistent' > /image/etc/passwd \
 && echo 'app:x:65532:' > /image/etc/group \
 && echo 'hosts: files dns' > /image/etc/nsswitch.conf \
 && chown 65532:65532 /image/data

FROM scratch
COPY --from=build /image /
ENV PATH=/usr/local/bin \
    NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_URL=sqlite:/data/animal-store.sqlite
WORKDIR /app
USER 65532:65532
# SQLite's file; the only place the service writes. Unused on PostgreSQL.
VOLUME /data
EXPOSE 3000
STOPSIGNAL SIGTERM
# npm start's node flags (package.json), without npm or a shell between the runtime and Node.
CMD ["node", "--max-old-space-size=128", "--max-semi-space-size=32", "--no-allocation-site-pretenuring", "--v8-pool-size=1", "dist/main.js"]
