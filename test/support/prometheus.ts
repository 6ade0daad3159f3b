import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/** Debian's `prometheus`, installed by .ci/run. */
export const PROMETHEUS_BIN = '/usr/bin/prometheus';

export interface Prometheus {
  /** An instant query through the HTTP API; the `data.result` of a successful answer. */
  query(promql: string): Promise<PromSample[]>;
  stop(): Promise<void>;
}

export interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}

/**
 * A real Prometheus on a free loopback port, scraping `targets` every second with the scrape
 * settings of deploy/prometheus/prometheus.yml, its data in a temporary directory.
 */
export async function startPrometheus(targets: string[]): Promise<Prometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-prometheus-'));
  const port = await freePort();
  const config = {
    global: { scrape_interval: '1s', evaluation_interval: '1s' },
    scrape_configs: [
      { job_name: 'animal-store', metrics_path: '/metrics', static_configs: [{ targets }] },
    ],
  };
  // JSON is YAML, so the configuration needs no YAML writer.
  await writeFile(join(dir, 'prometheus.yml'), JSON.stringify(config));
  const child = spawn(
    PROMETHEUS_BIN,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr.on('data', (chunk) => (log += chunk));
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  while (
    !(await fetch(`${origin}/-/ready`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`prometheus did not become ready:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    async query(promql) {
      const response = await fetch(
        `${origin}/api/v1/query?${new URLSearchParams({ query: promql }).toString()}`,
      );
      const body = (await response.json()) as {
        status: string;
        error?: string;
        data: { result: PromSample[] };
      };
      if (body.status !== 'success') throw new Error(`query ${promql} failed: ${body.error}`);
      return body.data.result;
    },
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
