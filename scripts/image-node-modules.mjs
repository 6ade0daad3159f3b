// `node scripts/image-node-modules.mjs DEST`, in the image's build stage after `npm ci` and the
// build: copies to DEST/node_modules the packages the bundle loads at run time (the build's
// externals, scripts/bundle-externals.mjs) and their dependencies, as package-lock.json laid them
// out, leaving out dev and optional packages (the Node 20 driver among them: the image runs Node
// 24). Everything else the service runs is in dist/. Then it drops what nothing loads: type
// declarations, source maps, Markdown, TypeScript sources, and better-sqlite3's C sources and its
// binaries for other platforms. About 60 MB instead of the 500 MB of a full install.
import { cpSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { EXTERNAL } from './bundle-externals.mjs';

const [dest] = process.argv.slice(2);
if (!dest) throw new Error('usage: node scripts/image-node-modules.mjs DEST');

const { packages } = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const installed = (path) => packages[path] && !packages[path].dev && !packages[path].optional;

/** Where `name`, required from the package at `from`, resolves: Node's lookup up the folders. */
function resolvePackage(from, name) {
  for (let base = from; ; base = base.slice(0, Math.max(0, base.lastIndexOf('/node_modules/')))) {
    const path = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (packages[path]) return path;
    if (!base) return undefined;
  }
}

const needed = new Set();
function take(path) {
  if (!path || needed.has(path) || !installed(path)) return;
  needed.add(path);
  const { dependencies = {}, optionalDependencies = {} } = packages[path];
  for (const name of Object.keys({ ...dependencies, ...optionalDependencies })) {
    take(resolvePackage(path, name));
  }
}
for (const pattern of EXTERNAL) {
  if (!pattern.endsWith('/*')) take(`node_modules/${pattern}`);
  else {
    const scope = `node_modules/${pattern.slice(0, -1)}`;
    for (const path of Object.keys(packages)) {
      if (path.startsWith(scope) && !path.slice(scope.length).includes('/')) take(path);
    }
  }
}

for (const path of needed) {
  cpSync(path, join(dest, path), {
    recursive: true,
    // A nested node_modules holds packages of their own, taken (or not) by the walk above.
    filter: (source) => !source.slice(path.length).includes('/node_modules'),
  });
}

const UNUSED_FILE = /(\.d\.[cm]?ts|\.map|\.md|(?<!\.d)\.[cm]?ts)$/i;
function prune(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) prune(path);
    else if (UNUSED_FILE.test(entry.name)) rmSync(path);
  }
}
prune(join(dest, 'node_modules'));

const sqlite = join(dest, 'node_modules/better-sqlite3');
rmSync(join(sqlite, 'deps'), { recursive: true, force: true });
rmSync(join(sqlite, 'src'), { recursive: true, force: true });
const platformBinary = `${process.platform}-${process.arch}.node`;
for (const binary of readdirSync(join(sqlite, 'prebuilds'))) {
  if (binary !== platformBinary) rmSync(join(sqlite, 'prebuilds', binary));
}
process.stdout.write(`${needed.size} packages in ${join(dest, 'node_modules')}\n`);
