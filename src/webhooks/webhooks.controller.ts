import { applyDecorators, Body, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiOperationOptions,
  ApiResponse,
  ApiParam,
} from '@nestjs/swagger';
import { RequireScope } from '../auth/require-scope.decorator.js';
import { webhookLimitMessage } from '../errors/api-error.js';
import { ApiErrorResponses, errorContent } from '../errors/api-error-responses.js';
import { ParsePathIdPipe } from '../http/path-id.pipe.js';
import { RATE_LIMIT_HEADERS } from '../rate-limit/rate-limit.openapi.js';
import { V1Controller } from '../rate-limit/v1-controller.decorator.js';
import { NewWebhookDto } from './dto/new-webhook.dto.js';
import { WebhookDto } from './dto/webhook.dto.js';
import { WEBHOOK_CALLBACKS } from './dto/webhook-delivery.openapi.js';
import { WEBHOOK_ID_SCHEMA } from './dto/webhook-properties.js';
import { WebhookWithSecretDto } from './dto/webhook-with-secret.dto.js';
import { MAX_WEBHOOKS } from './webhook-subscription.js';
import { WebhooksService } from './webhooks.service.js';

const WEBHOOK_ID = new ParsePathIdPipe('id');

const CREATE_WEBHOOK_DESCRIPTION =
  'Subscribes a URL to the changes committed from now on: each event (a PetEvent or CategoryEvent of listEvents) ' +
  'is POSTed to it, signed as Standard Webhooks 1.0 describes (`webhook-id`, `webhook-timestamp`, ' +
  '`webhook-signature`), retried until the receiver answers 2xx or the retry schedule ends, in ' +
  'event order while the receiver succeeds (the `petEvent` callback describes a delivery). The answer carries the signing secret: the only time ' +
  'it is shown.';

const ROTATE_SECRET_DESCRIPTION =
  'Gives the webhook a new signing secret, shown only in this answer. For 24 hours deliveries ' +
  'carry signatures by both the new and the previous secret, so the receiver can switch over ' +
  'without refusing any.';

@V1Controller('webhooks', 'webhooks')
@RequireScope('webhooks:manage')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    operationId: 'createWebhook',
    summary: 'Subscribe a URL to the changes',
    description: CREATE_WEBHOOK_DESCRIPTION,
    callbacks: WEBHOOK_CALLBACKS,
  })
  @ApiCreatedResponse({
    description: 'The webhook with its signing secret.',
    type: WebhookWithSecretDto,
    headers: RATE_LIMIT_HEADERS,
  })
  @ApiErrorResponses(400, 413, 415)
  @ApiResponse({
    status: 409,
    description: `\`WEBHOOK_LIMIT_REACHED\`: the store has ${MAX_WEBHOOKS} webhooks already. Nothing was changed.`,
    content: errorContent(409, { WEBHOOK_LIMIT_REACHED: webhookLimitMessage(MAX_WEBHOOKS) }),
  })
  createWebhook(@Body() webhook: NewWebhookDto): Promise<WebhookWithSecretDto> {
    return this.webhooks.create(webhook);
  }

  @Get()
  @ApiOperation({
    operationId: 'listWebhooks',
    summary: 'List the webhooks',
    description: `Every webhook of the store, oldest first, with the state of its deliveries: at most ${MAX_WEBHOOKS}, so the list is not paged.`,
  })
  @ApiOkResponse({
    description: 'Every webhook, oldest first.',
    type: [WebhookDto],
    headers: RATE_LIMIT_HEADERS,
  })
  listWebhooks(): Promise<WebhookDto[]> {
    return this.webhooks.list();
  }

  @Get(':id')
  @ApiWebhookOperation({
    operationId: 'getWebhook',
    summary: 'Get a webhook',
    description: 'The webhook and the state of its deliveries; never its secret.',
  })
  @ApiOkResponse({ description: 'The webhook.', type: WebhookDto, headers: RATE_LIMIT_HEADERS })
  getWebhook(@Param('id', WEBHOOK_ID) id: number): Promise<WebhookDto> {
    return this.webhooks.get(id);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiWebhookOperation({
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook',
    description:
      'Deletes the webhook and what it was still owed: nothing more is sent to it once this answers.',
  })
  @ApiNoContentResponse({ description: 'Deleted.', headers: RATE_LIMIT_HEADERS })
  async deleteWebhook(@Param('id', WEBHOOK_ID) id: number): Promise<void> {
    await this.webhooks.delete(id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @ApiWebhookOperation({
    operationId: 'rotateWebhookSecret',
    summary: "Replace a webhook's signing secret",
    description: ROTATE_SECRET_DESCRIPTION,
  })
  @ApiOkResponse({
    description: 'The webhook with its new signing secret.',
    type: WebhookWithSecretDto,
    headers: RATE_LIMIT_HEADERS,
  })
  rotateWebhookSecret(@Param('id', WEBHOOK_ID) id: number): Promise<WebhookWithSecretDto> {
    return this.webhooks.rotateSecret(id);
  }
}

/**
 * An operation on the webhook its path names: the operation, its `id` parameter, and the 400 and
 * 404 of a bad or unknown one.
 */
function ApiWebhookOperation(operation: ApiOperationOptions) {
  return applyDecorators(
    ApiOperation(operation),
    ApiErrorResponses(400, 404),
    ApiParam({
      name: 'id',
      description: 'The identifier of the webhook.',
      schema: WEBHOOK_ID_SCHEMA,
    }),
  );
}
