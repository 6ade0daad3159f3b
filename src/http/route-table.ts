import { Injectable } from '@nestjs/common';

/**
 * Every route the HTTP server registered, so a request that matched no route can be told apart:
 * unknown path (404) or known path with another method (405 with `Allow`).
 */
@Injectable()
export class RouteTable {
  private readonly routes: { method: string; pattern: RegExp }[] = [];

  add(methods: string | string[], url: string): void {
    const pattern = new RegExp(
      `^${url
        .split(/(:[^/]+|\*)/)
        .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : escapeRegExp(part)))
        .join('')}$`,
    );
    for (const method of [methods].flat()) this.routes.push({ method, pattern });
  }

  /** Methods that have a route for this path, sorted; empty when the path is unknown. */
  allowedMethods(path: string): string[] {
    const methods = this.routes
      .filter(({ pattern }) => pattern.test(path))
      .map(({ method }) => method);
    return [...new Set(methods)].sort();
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
