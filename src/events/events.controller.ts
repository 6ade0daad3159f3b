import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RequireScope } from '../auth/require-scope.decorator.js';
import { ApiErrorResponses, errorContent } from '../errors/api-error-responses.js';
import { ApiRateLimitedResponse, RATE_LIMIT_HEADERS } from '../rate-limit/rate-limit.openapi.js';
import { ListEventsQueryDto } from './dto/list-events-query.dto.js';
import { PetEventDto } from './dto/pet-event.dto.js';
import { CURSOR_EXPIRED_MESSAGE, EventsService } from './events.service.js';

export const EVENTS_PATH = '/v1/events';

const LIST_EVENTS_DESCRIPTION =
  'The change feed: every committed change of a pet, oldest first, in the one order of events. ' +
  'Every answer has `Link: <…>; rel="next"`, the position after the last event served (or the ' +
  'same position when there was none), so a follower requests that link, now or later, forever, ' +
  'and sees every event exactly once, in order, whichever instance answers.';

@ApiTags('events')
@ApiErrorResponses(401)
@ApiRateLimitedResponse()
@ApiErrorResponses(500, 503)
@Controller({ path: 'events', version: '1' })
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @RequireScope('pets:read')
  @ApiOperation({
    operationId: 'listEvents',
    summary: 'Follow the changes',
    description: LIST_EVENTS_DESCRIPTION,
  })
  @ApiOkResponse({
    description: 'A page of events, oldest first; empty when the follower is up to date.',
    type: [PetEventDto],
    headers: {
      Link: {
        description:
          'RFC 8288 link to the next page, `<…>; rel="next"`: on every page, the last included.',
        schema: { type: 'string' },
      },
      ...RATE_LIMIT_HEADERS,
    },
  })
  @ApiErrorResponses(400)
  @ApiResponse({
    status: 410,
    description: `\`CURSOR_EXPIRED\`: ${CURSOR_EXPIRED_MESSAGE}.`,
    content: errorContent(410, { CURSOR_EXPIRED: CURSOR_EXPIRED_MESSAGE }),
  })
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
}
