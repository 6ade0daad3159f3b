/**
 * Which methods have a route for a request target: what the filter needs to tell a 404 from a 405.
 * The HTTP layer's route table provides it (src/http/route-table.ts, bound in app.module.ts), so
 * this floor never imports that one (docs/architecture.md).
 */
export abstract class RouteMethods {
  /** The methods with a route for this target, sorted; empty when no route has its path. */
  abstract allowedMethods(target: string): string[];
}
