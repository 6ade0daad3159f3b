import { applyDecorators, Get, Headers, Query, Res } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiResponse,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { PassThrough } from 'node:stream';
import { type ApiKeyPrincipal, CurrentPrincipal } from '../auth/principal.js';
import { RequireScope } from '../auth/require-scope.decorator.js';
import { ApiErrorResponses, errorContent } from '../errors/api-error-responses.js';
import { RATE_LIMIT_HEADERS } from '../rate-limit/rate-limit.openapi.js';
import { V1Controller } from '../rate-limit/v1-controller.decorator.js';
import { ListEventsQueryDto } from './dto/list-events-query.dto.js';
import { CategoryEventDto, EVENT_SCHEMA, OrderEventDto, PetEventDto } from './dto/pet-event.dto.js';
import { StreamEventsQueryDto } from './dto/stream-events-query.dto.js';
import { EventStreams, KEY_REFUSED_EVENT, STREAM_SCOPE, type StreamSink } from './event-streams.js';
import { CURSOR_EXPIRED_MESSAGE, EventsService } from './events.service.js';

export const EVENTS_PATH = '/v1/events';

const LIST_EVENTS_DESCRIPTION =
  'The change feed: every committed change of a pet or of a category name, oldest first, in the ' +
  'one order of events. ' +
  'Every answer has `Link: <…>; rel="next"`, the position after the last event served (or the ' +
  'same position when there was none), so a follower requests that link, now or later, forever, ' +
  'and sees every event exactly once, in order, whichever instance answers.';

const STREAM_EVENTS_DESCRIPTION =
  'The same events as listEvents, pushed as they commit (WHATWG Server-Sent Events). Resumes right ' +
  'after `Last-Event-ID` (or `after`) with no gap and no repeat; without either, sends the events ' +
  'committed from now on. A change committed through any instance reaches every open stream ' +
  'within about a second. At most `EVENT_STREAMS_PER_KEY` (default 5) streams per key are open ' +
  'on one instance; the next gets 429. The stream ends when the instance stops; reconnect (with ' +
  '`Last-Event-ID`) and another instance resumes it. It also ends when its key expires (within a ' +
  'second), or is revoked or loses `pets:read` (within about 2 s): then its last message is ' +
  `\`event: ${KEY_REFUSED_EVENT}\`, whose data is the Error body a request with that key now ` +
  'gets (401, or 403 for the scope). Do not reconnect with that key.';

@V1Controller('events', 'events')
@ApiExtraModels(PetEventDto, CategoryEventDto, OrderEventDto)
export class EventsController {
  constructor(
    private readonly events: EventsService,
    private readonly streams: EventStreams,
  ) {}

  @Get()
  @RequireScope('pets:read')
  @ApiOperation({
    operationId: 'listEvents',
    summary: 'Follow the changes',
    description: LIST_EVENTS_DESCRIPTION,
  })
  @ApiOkResponse({
    description: 'A page of events, oldest first; empty when the follower is up to date.',
    schema: { type: 'array', items: EVENT_SCHEMA },
    headers: {
      Link: {
        description:
          'RFC 8288 link to the next page, `<…>; rel="next"`: on every page, the last included.',
        schema: { type: 'string' },
      },
      ...RATE_LIMIT_HEADERS,
    },
  })
  @ApiCursorErrors()
  async listEvents(
    @Query() query: ListEventsQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const page = await this.events.page(query);
    reply
      .header('Link', `<${EVENTS_PATH}?${new URLSearchParams(page.next).toString()}>; rel="next"`)
      .type('application/json; charset=utf-8');
    return page.json;
  }

  @Get('stream')
  @RequireScope(STREAM_SCOPE)
  @ApiOperation({
    operationId: 'streamEvents',
    summary: 'Watch the changes live',
    description: STREAM_EVENTS_DESCRIPTION,
  })
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description:
      'The id of the last event you received: the stream resumes right after it, with no gap and no repeat. Browsers send it by themselves when they reconnect.',
    schema: { type: 'string', example: '7301-42' },
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({
    description: `A \`text/event-stream\` that stays open: each event as \`id:\`, \`event:\` (its type) and \`data:\` (the event JSON: a PetEvent or a CategoryEvent) lines, and comment lines (\`: keep-alive\`) at least every 15 s. A stream whose key is no longer accepted ends with \`event: ${KEY_REFUSED_EVENT}\` and \`data:\` (the Error body), without \`id:\`.`,
    content: {
      'text/event-stream': {
        schema: { type: 'string' },
        example:
          ': connected\n\nid: 7301-42\nevent: pet.updated\ndata: {"id":"7301-42","type":"pet.updated","timestamp":"2026-11-25T18:04:05.123Z","data":{"pet":{"id":42,"name":"Rex","categoryId":1,"status":"sold"},"previous":{"status":"available"}}}\n\n',
      },
    },
    headers: RATE_LIMIT_HEADERS,
  })
  @ApiCursorErrors()
  async streamEvents(
    @Query() query: StreamEventsQueryDto,
    @Headers('last-event-id') lastEventId: string | undefined,
    @CurrentPrincipal() principal: ApiKeyPrincipal,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const from = await this.events.resumePosition(lastEventId, query.after);
    const body = new PassThrough();
    // The client may have gone while the guard or the retention check ran: open then sees it
    // gone and counts nothing, or the close listeners, added in the same turn, will hear it.
    const stream = this.streams.open(principal, from, responseSink(reply, body));
    if (stream) onClientGone(reply, () => this.streams.close(stream));
    else body.end();
    // X-Accel-Buffering: a buffering proxy (nginx) would hold events back.
    void reply
      .type('text/event-stream; charset=utf-8')
      .header('x-accel-buffering', 'no')
      .send(body);
  }
}

/** A stream's writes go to `body`, which Fastify pipes into the response. */
function responseSink(reply: FastifyReply, body: PassThrough): StreamSink {
  const response = reply.raw;
  const socket = reply.request.raw.socket;
  return {
    write: (chunk) => body.write(chunk),
    get buffered() {
      return body.writableLength + (response.writableLength ?? 0);
    },
    get closed() {
      return response.destroyed || socket.destroyed;
    },
    drain: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          body.off('drain', done);
          response.off('drain', done);
          response.off('close', done);
          resolve();
        };
        body.once('drain', done);
        response.once('drain', done);
        response.once('close', done);
      }),
    end: () => body.end(),
    // Fastify destroys the body once the response is gone.
    abort: () => response.destroy(),
  };
}

/**
 * Calls `listener` once when the client's connection closes: the response's close, or the
 * socket's, which a response still queued behind another on the connection never hears.
 */
function onClientGone(reply: FastifyReply, listener: () => void): void {
  const response = reply.raw;
  const socket = reply.request.raw.socket;
  const gone = () => {
    response.off('close', gone);
    socket.off('close', gone);
    listener();
  };
  response.once('close', gone);
  socket.once('close', gone);
}

/** The 400 of a malformed cursor and the 410 of one older than retention. */
function ApiCursorErrors() {
  return applyDecorators(
    ApiErrorResponses(400),
    ApiResponse({
      status: 410,
      description: `\`CURSOR_EXPIRED\`: ${CURSOR_EXPIRED_MESSAGE}.`,
      content: errorContent(410, { CURSOR_EXPIRED: CURSOR_EXPIRED_MESSAGE }),
    }),
  );
}
