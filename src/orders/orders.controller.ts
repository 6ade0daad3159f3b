import { applyDecorators, Body, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { type ApiKeyPrincipal, CurrentPrincipal } from '../auth/principal.js';
import { RequireScope } from '../auth/require-scope.decorator.js';
import {
  ApiIdempotencyKeyHeader,
  IDEMPOTENT_REPLAYED_HEADER,
  IDEMPOTENT_REPLAYED_RESPONSE_HEADER,
  IdempotencyKey,
} from '../idempotency/idempotency-key.js';
import { ApiErrorResponses, errorContent } from '../errors/api-error-responses.js';
import { type IfMatch, IfMatchHeader } from '../http/if-match.js';
import { ParsePathIdPipe } from '../http/path-id.pipe.js';
import { HttpRoute } from '../http/route-config.js';
import {
  ApiConditionalGet,
  COMPUTED_ETAG,
  validatorHeaders,
} from '../http/conditional-get.openapi.js';
import { RATE_LIMIT_HEADERS } from '../rate-limit/rate-limit.openapi.js';
import { V1Controller } from '../rate-limit/v1-controller.decorator.js';
import { ListOrdersQueryDto } from './dto/list-orders-query.dto.js';
import { NewOrderDto } from './dto/new-order.dto.js';
import { OrderDto } from './dto/order.dto.js';
import { ORDER_ID_SCHEMA } from './dto/order-properties.js';
import { RespondsWithOrder, RespondsWithOrders } from './dto/order-response.schema.js';
import { orderEntityTag } from './order-entity-tag.js';
import { OrdersService, type TaggedOrder } from './orders.service.js';

/** Where listOrders' next page links point. */
const ORDERS_PATH = '/v1/orders';

const ORDER_ID = new ParsePathIdPipe('orderId');

const ORDER_ETAG = {
  description:
    'Strong validator of this order: changes when the order closes. Send it in `If-Match` on ' +
    'completeOrder or cancelOrder to act only on the order as you read it.',
  schema: { type: 'string', example: orderEntityTag(7, 1) },
};

const LIST_ORDERS_HEADERS = {
  Link: {
    description: 'RFC 8288 link to the next page, `<…>; rel="next"`; absent on the last page.',
    schema: { type: 'string' },
  },
  ...RATE_LIMIT_HEADERS,
};

const CREATE_ORDER_DESCRIPTION =
  'Holds an available animal for a buyer: in one transaction the animal becomes `pending` and ' +
  'the order is created `open`, with `expiresAt` `holdSeconds` from now. Of concurrent orders ' +
  'of one animal exactly one succeeds, on any number of instances. From `expiresAt` on the ' +
  'order can only expire and the animal can be ordered again. Send an `Idempotency-Key` to make ' +
  'retries safe. Refusals come in this order: 401, 403, 400/413/415, 409.';

const CLOSE_DESCRIPTION =
  'Refusals come in this order: 401, 403, 400, 404, 412, 409. An open order whose `expiresAt` ' +
  'has passed is expired by this request first, and answers 409 `ORDER_NOT_OPEN` naming `expired`.';

const PET_NOT_AVAILABLE_MESSAGE = 'Pet 42 is pending: only an available pet can be ordered';
const ORDER_NOT_OPEN_MESSAGE =
  'Order 7 is expired: only an open order can be completed or cancelled';

@V1Controller('orders', 'orders')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Get()
  @RequireScope('pets:read')
  @HttpRoute({ etag: true })
  @RespondsWithOrders()
  @ApiOperation({
    operationId: 'listOrders',
    summary: 'List orders',
    description:
      'Returns orders in ascending id order, at most `limit` per page, optionally only those in ' +
      'one state or of one animal. When more follow, the response has a `Link: <…>; rel="next"` ' +
      'header; following it until it is absent visits every order that existed when the walk began exactly once.',
  })
  @ApiOkResponse({
    description: 'A page of orders, in ascending id order.',
    type: [OrderDto],
    headers: { ...validatorHeaders(COMPUTED_ETAG), ...LIST_ORDERS_HEADERS },
  })
  @ApiConditionalGet(LIST_ORDERS_HEADERS)
  @ApiErrorResponses(400)
  async listOrders(
    @Query() query: ListOrdersQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<OrderDto[]> {
    const page = await this.orders.list(query);
    if (page.next)
      reply.header(
        'Link',
        `<${ORDERS_PATH}?${new URLSearchParams(page.next).toString()}>; rel="next"`,
      );
    return page.orders;
  }

  @Post()
  @HttpCode(201)
  @RespondsWithOrder(201)
  @RequireScope('orders:write')
  @ApiOperation({
    operationId: 'createOrder',
    summary: 'Hold an animal for a buyer',
    description: CREATE_ORDER_DESCRIPTION,
  })
  @ApiIdempotencyKeyHeader()
  @ApiCreatedResponse({
    description: 'The order, open, holding the animal until `expiresAt`.',
    type: OrderDto,
    headers: { ETag: ORDER_ETAG, ...IDEMPOTENT_REPLAYED_RESPONSE_HEADER, ...RATE_LIMIT_HEADERS },
  })
  @ApiErrorResponses(400, 413, 415, 422)
  @ApiResponse({
    status: 409,
    description:
      '`PET_NOT_AVAILABLE`: the animal is not `available` (it is pending, sold, has no status, or ' +
      'another order holds it); the message names its status. Nothing was changed.',
    content: errorContent(409, { PET_NOT_AVAILABLE: PET_NOT_AVAILABLE_MESSAGE }),
  })
  async createOrder(
    @Body() newOrder: NewOrderDto,
    @IdempotencyKey() idempotencyKey: string | undefined,
    @CurrentPrincipal() principal: ApiKeyPrincipal,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<OrderDto | string> {
    if (idempotencyKey === undefined)
      return withEntityTag(reply, await this.orders.place(newOrder));
    const placed = await this.orders.placeOnce(newOrder, principal.id, idempotencyKey);
    if (!placed.replayed) return withEntityTag(reply, placed);
    // The stored text goes out as it is, so a replay is the first answer byte for byte.
    reply
      .header(IDEMPOTENT_REPLAYED_HEADER, 'true')
      .header('ETag', placed.etag)
      .type('application/json; charset=utf-8');
    return placed.body;
  }

  @Get(':orderId')
  @RequireScope('pets:read')
  @HttpRoute({ etag: true })
  @RespondsWithOrder(200)
  @ApiOperation({
    operationId: 'getOrder',
    summary: 'Get an order',
    description:
      'Returns the order with its ETag. An open order past its `expiresAt` can no longer be ' +
      'completed or cancelled; reads may show it `open` until its expiry is committed, within 5 s.',
  })
  @ApiOkResponse({
    description: 'The order.',
    type: OrderDto,
    headers: { ...validatorHeaders(ORDER_ETAG), ...RATE_LIMIT_HEADERS },
  })
  @ApiConditionalGet(RATE_LIMIT_HEADERS, ORDER_ETAG)
  @ApiErrorResponses(400, 404)
  @ApiOrderId()
  async getOrder(
    @Param('orderId', ORDER_ID) orderId: number,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<OrderDto> {
    return withEntityTag(reply, await this.orders.get(orderId));
  }

  @Post(':orderId/complete')
  @HttpCode(200)
  @RespondsWithOrder(200)
  @RequireScope('orders:write')
  @ApiOperation({
    operationId: 'completeOrder',
    summary: 'Sell the animal an order holds',
    description: `An open order before its \`expiresAt\` becomes \`completed\` and its animal \`sold\`. ${CLOSE_DESCRIPTION}`,
  })
  @ApiCloseOrder('The order, completed; its animal is sold.')
  async completeOrder(
    @Param('orderId', ORDER_ID) orderId: number,
    @IfMatchHeader() ifMatch: IfMatch | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<OrderDto> {
    return withEntityTag(reply, await this.orders.complete(orderId, ifMatch));
  }

  @Post(':orderId/cancel')
  @HttpCode(200)
  @RespondsWithOrder(200)
  @RequireScope('orders:write')
  @ApiOperation({
    operationId: 'cancelOrder',
    summary: 'Release the animal an order holds',
    description: `An open order before its \`expiresAt\` becomes \`cancelled\` and its animal \`available\` again. ${CLOSE_DESCRIPTION}`,
  })
  @ApiCloseOrder('The order, cancelled; its animal is available again.')
  async cancelOrder(
    @Param('orderId', ORDER_ID) orderId: number,
    @IfMatchHeader() ifMatch: IfMatch | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<OrderDto> {
    return withEntityTag(reply, await this.orders.cancel(orderId, ifMatch));
  }
}

function ApiOrderId() {
  return ApiParam({
    name: 'orderId',
    description: 'The identifier of the order.',
    schema: { ...ORDER_ID_SCHEMA, example: 7 },
  });
}

/** What completeOrder and cancelOrder share: If-Match, the answer, and the refusals. */
function ApiCloseOrder(closed: string) {
  return applyDecorators(
    ApiHeader({
      name: 'If-Match',
      required: false,
      description:
        'The `ETag` of the order as you read it (a list of them, or `*`): the order is closed ' +
        'only if it still has it, otherwise 412. Compared strongly.',
      schema: { type: 'string' },
    }),
    ApiOkResponse({
      description: closed,
      type: OrderDto,
      headers: { ETag: ORDER_ETAG, ...RATE_LIMIT_HEADERS },
    }),
    ApiErrorResponses(400, 404, 412),
    ApiResponse({
      status: 409,
      description:
        '`ORDER_NOT_OPEN`: the order is completed, cancelled or expired (an open order past its ' +
        '`expiresAt` included); the message names its status. Nothing was changed.',
      content: errorContent(409, { ORDER_NOT_OPEN: ORDER_NOT_OPEN_MESSAGE }),
    }),
    ApiOrderId(),
  );
}

/** Sends the order's ETag with it. */
function withEntityTag(reply: FastifyReply, { order, etag }: TaggedOrder): OrderDto {
  reply.header('ETag', etag);
  return order;
}
