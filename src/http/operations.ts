import type { OpenAPIObject } from '@nestjs/swagger';

export interface Operation {
  id: string;
  deprecated: boolean;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/**
 * The documented operation of each route, keyed by `METHOD route-pattern` as Fastify reports the
 * pattern (`GET /v1/pets/:petId`). The document's paths are relative to its `/v1` servers.
 */
export function operationsByRoute(
  document: OpenAPIObject,
  versionPrefix = '/v1',
): Map<string, Operation> {
  const operations = new Map<string, Operation>();
  for (const [path, item] of Object.entries(document.paths)) {
    const route = versionPrefix + path.replace(/\{([^}]+)\}/g, ':$1');
    for (const method of HTTP_METHODS) {
      const operation = item[method as keyof typeof item] as
        { operationId?: string; deprecated?: boolean } | undefined;
      if (operation?.operationId)
        operations.set(`${method.toUpperCase()} ${route}`, {
          id: operation.operationId,
          deprecated: operation.deprecated === true,
        });
    }
  }
  return operations;
}
