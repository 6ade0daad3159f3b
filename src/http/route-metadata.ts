import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

/**
 * A reader of one metadata key of a request's route, the handler's value over its class's (as
 * `Reflector.getAllAndOverride`). Decorators are applied when the classes load, so each handler's
 * value is read once and kept: read on every request, it walks reflect-metadata's maps.
 */
export function routeMetadata<T>(
  key: string | symbol,
): (reflector: Reflector, context: ExecutionContext) => T | undefined {
  const read = new WeakMap<object, WeakMap<object, { value: T | undefined }>>();
  return (reflector, context) => {
    const handler = context.getHandler();
    const controller = context.getClass();
    let ofController = read.get(controller);
    if (ofController === undefined) read.set(controller, (ofController = new WeakMap()));
    let known = ofController.get(handler);
    if (known === undefined) {
      known = { value: reflector.getAllAndOverride<T>(key, [handler, controller]) };
      ofController.set(handler, known);
    }
    return known.value;
  };
}
