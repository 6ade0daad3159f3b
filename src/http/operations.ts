import type { OpenAPIObject } from '@nestjs/swagger';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/**
 * The documented operationId of each route, keyed by `METHOD route-pattern` as Fastify reports the
 * pattern (`GET /v1/pets/:petId`). The document's paths are relative to its `/v1` servers.
 */
export function operationsByRoute(
  document: OpenAPIObject,
  versionPrefix = '/v1',
): Map<string, string> {
  const operations = new Map<string, string>();
  for (const [path, item] of Object.entries(document.paths)) {
    const route = versionPrefix + path.replace(/\{([^}]+)\}/g, ':$1');
    for (const method of HTTP_METHODS) {
      const operation = item[method as keyof typeof item] as { operationId?: string } | undefined;
      if (operation?.operationId)
        operations.set(`${method.toUpperCase()} ${route}`, operation.operationId);
    }
  }
  return operations;
}
