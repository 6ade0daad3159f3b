import { type ExecutionContext, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { describe, expect, it, vi } from 'vitest';
import type { MatchedRoute } from '../../../src/http/route-config.js';
import { routeMetadata } from '../../../src/http/route-metadata.js';

const MARK = Symbol('mark');

@SetMetadata(MARK, 'class')
class MarkedController {
  @SetMetadata(MARK, 'handler')
  own(): void {}

  inherited(): void {}
}

const markOf = routeMetadata<string>(MARK);

/** A request of `route` to `handler`, as Nest hands a guard its context. */
function contextOf(handler: () => void, route: MatchedRoute | null): ExecutionContext {
  return {
    getHandler: () => handler,
    getClass: () => MarkedController,
    getArgByIndex: (index: number) => [{ matchedRoute: route }, {}][index],
  } as unknown as ExecutionContext;
}

const routeOf = (): MatchedRoute => ({ url: '/v1/x', config: undefined, metadata: new Map() });

describe('routeMetadata', () => {
  it("reads the handler's value over its class's, once per route", () => {
    const reflector = new Reflector();
    const read = vi.spyOn(reflector, 'getAllAndOverride');
    const own = routeOf();
    const inherited = routeOf();

    for (let i = 0; i < 3; i++) {
      expect(markOf(reflector, contextOf(MarkedController.prototype.own, own))).toBe('handler');
      expect(markOf(reflector, contextOf(MarkedController.prototype.inherited, inherited))).toBe(
        'class',
      );
    }
    expect(read).toHaveBeenCalledTimes(2);
  });

  it('keeps an absent value as known, and reads afresh for a request no route was marked on', () => {
    const reflector = new Reflector();
    const read = vi.spyOn(reflector, 'getAllAndOverride');
    const unmarked = routeMetadata<string>(Symbol('absent'));
    const route = routeOf();

    unmarked(reflector, contextOf(MarkedController.prototype.own, route));
    unmarked(reflector, contextOf(MarkedController.prototype.own, route));
    expect(read).toHaveBeenCalledTimes(1);

    expect(markOf(reflector, contextOf(MarkedController.prototype.own, null))).toBe('handler');
    expect(markOf(reflector, contextOf(MarkedController.prototype.own, null))).toBe('handler');
    expect(read).toHaveBeenCalledTimes(3);
  });
});
