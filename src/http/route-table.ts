import { Injectable } from '@nestjs/common';
import { RouteMethods } from '../errors/route-methods.js';

/**
 * Every route the HTTP server registered, so a request that matched no route can be told apart:
 * unknown path (404) or known path with another method (405 with `Allow`).
 */
@Injectable()
export class RouteTable extends RouteMethods {
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

  /**
   * Methods that have a route for this request target, sorted; empty when the path is unknown.
   * The target is read as the router reads it, so the answer matches what another method gets.
   */
  allowedMethods(target: string): string[] {
    const path = routedPath(target);
    const methods = this.routes
      .filter(({ pattern }) => pattern.test(path))
      .map(({ method }) => method);
    return [...new Set(methods)].sort();
  }
}

/**
 * The path the router matches for a request target: the absolute form's scheme and authority
 * dropped (RFC 9112 §3.2.2), query and fragment cut, percent-escapes decoded as find-my-way does
 * (decodeURI, which leaves an encoded `/` alone). A target it cannot decode stays as it is.
 */
function routedPath(target: string): string {
  const path = target.replace(/^https?:\/\/[^/?#]*/i, '').split(/[?#]/, 1)[0] || '/';
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
