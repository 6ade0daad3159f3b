import {
  applyDecorators,
  type CanActivate,
  type ExecutionContext,
  Injectable,
  Optional,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError } from '../errors/api-error.js';
import { ApiKeyUsage } from '../auth/api-key-usage.js';
import { principalOf } from '../auth/principal.js';
import { requestOf } from '../http/http-context.js';
import { routeMetadata } from '../http/route-metadata.js';
import { Metrics } from '../metrics/metrics.js';
import { Clock } from '../time/clock.js';

/** A deprecated operation and its end (docs/api-design.md, "Deprecation"). */
export interface Deprecation {
  /** The operationId of the deprecated operation, as the OpenAPI document names it. */
  operationId: string;
  /** When the operation was deprecated (RFC 9745 `Deprecation`). */
  since: Date;
  /** When it stops working: from this instant on it answers 410 GONE (RFC 8594 `Sunset`). */
  sunset: Date;
  /** The path of what replaces it (`Link rel="successor-version"`). */
  successor: string;
  /** What replaces it, in words, for the 410 message and the documentation. */
  replacement: string;
}

/** The headers every response of a deprecated route carries, before and after its sunset. */
export function deprecationHeaders({
  since,
  sunset,
  successor,
}: Deprecation): Record<string, string> {
  return {
    Deprecation: `@${Math.floor(since.getTime() / 1000)}`,
    Sunset: sunset.toUTCString(),
    Link: `<${successor}>; rel="successor-version"`,
  };
}

/** The message of the 410 a route answers from its sunset on. */
export function goneMessage({ sunset, replacement }: Deprecation): string {
  return `This operation was removed on ${sunset.toUTCString()}; use ${replacement} instead`;
}

const DEPRECATION = Symbol('deprecation');

const deprecationOf = routeMetadata<Deprecation>(DEPRECATION);

/**
 * Notes which key called, then answers 410 GONE from the route's sunset on. A route guard, so it runs after the key and rate
 * limit guards (a caller without a valid key still gets 401) and before the route's pipes: after
 * the sunset every request to the route is a 410, whatever its parameters.
 */
@Injectable()
export class SunsetGuard implements CanActivate {
  constructor(
    private readonly clock: Clock,
    private readonly reflector: Reflector,
    private readonly keyUsage: ApiKeyUsage,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const deprecation = deprecationOf(this.reflector, context)!;
    // Who still calls it, for `apikey list` and the metric (docs/observability.md, "Deprecation").
    const principal = principalOf(requestOf(context));
    this.keyUsage.recordDeprecatedCall(principal.id);
    this.metrics?.deprecatedCalls.inc(deprecation.operationId, principal.name);
    if (this.clock.now() >= deprecation.sunset)
      throw new ApiError('GONE', goneMessage(deprecation));
    return true;
  }
}

/**
 * Marks a route as deprecated: 410 GONE from its sunset on. Its headers are sent with the route's
 * other HTTP settings (`HttpRoute`, route-config.ts), on errors too.
 */
export const Deprecated = (deprecation: Deprecation) =>
  applyDecorators(SetMetadata(DEPRECATION, deprecation), UseGuards(SunsetGuard));
