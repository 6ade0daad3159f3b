import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * One JSON line per request, written when it completes (docs/api-design.md, "Operations"): method,
 * route pattern, status, duration and request id. Never headers, so never the Authorization header.
 */
export class RequestLogController extends LogController {
  /** @param routeOf the route pattern a request matched, undefined when none did */
  constructor(private readonly routeOf: (request: FastifyRequest) => string | undefined) {
    super({ requestIdLogLabel: 'requestId' });
  }

  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line = {
      method: request.method,
      route: this.routeOf(request) ?? null,
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
    };
    if (error) request.log.error({ ...line, err: error }, 'request');
    else request.log.info(line, 'request');
  }
}
