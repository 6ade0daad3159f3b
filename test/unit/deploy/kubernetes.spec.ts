import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { readFileSync } from 'node:fs';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Service } from 'kubernetes-models/v1/Service';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { describe, expect, it } from 'vitest';
import { kustomize, parseYaml, type KubernetesObject } from '../../support/kubernetes.js';

/** The API schema of each kind the manifests use, from the npm packages that bundle them. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1 Deployment': Deployment,
  'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'batch/v1 Job': Job,
  'v1 ConfigMap': ConfigMap,
  'v1 PersistentVolumeClaim': PersistentVolumeClaim,
  'v1 Service': Service,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
  'monitoring.coreos.com/v1 ServiceMonitor': ServiceMonitor,
};

const postgres = kustomize('deploy/kubernetes/overlays/postgres');
const sqlite = kustomize('deploy/kubernetes/overlays/sqlite');
const apiKeyJob = parseYaml(readFileSync('deploy/kubernetes/jobs/create-api-key.yaml', 'utf8'));

function one(objects: KubernetesObject[], kind: string): Record<string, any> {
  const found = objects.filter((object) => object.kind === kind);
  expect(found).toHaveLength(1);
  return found[0];
}

describe('deploy/kubernetes', () => {
  it.each([
    ['postgres', postgres],
    ['sqlite', sqlite],
    ['the API-key Job', apiKeyJob],
  ])('%s: every object is valid against its Kubernetes API schema', (_, objects) => {
    for (const object of objects) {
      const Model = MODELS[`${object.apiVersion} ${object.kind}`];
      expect(Model, `${object.apiVersion} ${object.kind}`).toBeDefined();
      expect(() => new Model(object as never).validate()).not.toThrow();
    }
  });

  it('postgres: two or more stateless replicas, rolled with none unavailable, under a PDB and an HPA', () => {
    const deployment = one(postgres, 'Deployment');
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(deployment.spec.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
    });
    const selector = deployment.spec.selector.matchLabels;
    expect(one(postgres, 'PodDisruptionBudget').spec).toEqual({
      minAvailable: 1,
      selector: { matchLabels: selector },
    });
    const autoscaler = one(postgres, 'HorizontalPodAutoscaler').spec;
    expect(autoscaler.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: deployment.metadata.name,
    });
    expect(autoscaler.minReplicas).toBe(deployment.spec.replicas);
    expect(one(postgres, 'Service').spec.selector).toEqual(selector);
    expect(one(postgres, 'ServiceMonitor').spec).toEqual({
      selector: { matchLabels: selector },
      endpoints: [{ port: 'metrics', path: '/metrics', interval: '15s' }],
    });
  });

  it.each([
    ['postgres', postgres],
    ['sqlite', sqlite],
  ])('%s: probes, a drained stop, resources and the restricted security profile', (_, objects) => {
    const pod = one(objects, 'Deployment').spec.template.spec;
    const [container] = pod.containers;
    expect(container.readinessProbe.httpGet).toEqual({ path: '/health/ready', port: 'http' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
    expect(container.lifecycle.preStop).toEqual({ sleep: { seconds: 5 } });
    // preStop, then the service's own stop of at most 10 s, within the grace period.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(5 + 10);
    expect(Object.keys(container.resources).sort()).toEqual(['limits', 'requests']);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.ports).toEqual([
      { name: 'http', containerPort: 3000 },
      { name: 'metrics', containerPort: 9464 },
    ]);
    const config = one(objects, 'ConfigMap');
    expect(container.envFrom[0]).toEqual({ configMapRef: { name: config.metadata.name } });
    expect(config.data).toMatchObject({
      NODE_ENV: 'production',
      HOST: '0.0.0.0',
      PORT: '3000',
      METRICS_PORT: '9464',
    });
  });

  it('postgres: the database and Redis URLs come from a Secret, as they do for the key Job', () => {
    const [container] = one(postgres, 'Deployment').spec.template.spec.containers;
    const secret = { secretRef: { name: 'animal-store-database' } };
    expect(container.envFrom).toContainEqual(secret);
    expect(container.env).toBeUndefined();
    const job = one(apiKeyJob, 'Job').spec.template.spec;
    expect(job.containers[0].envFrom).toContainEqual(secret);
    expect(job.containers[0].command).toEqual([
      'node',
      'dist/api-key.cli.js',
      'create',
      'my-client',
    ]);
  });

  it('sqlite: one pod, stopped before its successor starts, writing only to its volume', () => {
    const deployment = one(sqlite, 'Deployment');
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
    const pod = deployment.spec.template.spec;
    const claim = one(sqlite, 'PersistentVolumeClaim');
    expect(pod.volumes).toEqual([
      { name: 'data', persistentVolumeClaim: { claimName: claim.metadata.name } },
    ]);
    expect(pod.containers[0].volumeMounts).toEqual([{ name: 'data', mountPath: '/data' }]);
    expect(pod.containers[0].env).toEqual([
      { name: 'DATABASE_URL', value: 'sqlite:/data/animal-store.sqlite' },
    ]);
    expect(sqlite.map((object) => object.kind).sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'PersistentVolumeClaim',
      'Service',
    ]);
  });
});
