import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import {
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsIn,
  ValidateBy,
  type ValidationOptions,
  ValidateIf,
} from 'class-validator';
import { EVENT_TYPES, type EventType } from '../../events/pet-event.js';
import { expecting } from '../../http/field-messages.js';
import {
  EVENT_TYPE_LIST_SCHEMA,
  WEBHOOK_PROPERTIES,
  WEBHOOK_URL_MAX_LENGTH,
} from './webhook-properties.js';

const URL_FIELD = expecting(
  'url',
  `an absolute http or https URL of at most ${WEBHOOK_URL_MAX_LENGTH} characters, without credentials or fragment`,
);
const EVENTS = expecting(
  'events',
  `a non-empty array of distinct event types, each one of ${EVENT_TYPES.map((type) => `"${type}"`).join(', ')} (or absent for all)`,
);

/** An absolute http(s) URL with a host, no user name, password or fragment, not too long. */
export function isWebhookUrl(value: unknown): boolean {
  if (typeof value !== 'string' || !URL.canParse(value)) return false;
  const url = new URL(value);
  return (
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    url.hostname !== '' &&
    url.username === '' &&
    url.password === '' &&
    url.hash === '' &&
    !value.includes('#') &&
    url.href.length <= WEBHOOK_URL_MAX_LENGTH
  );
}

function IsWebhookUrl(options: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'isWebhookUrl', validator: { validate: isWebhookUrl } }, options);
}

@ApiSchema({ name: 'NewWebhook', description: 'A webhook to create.' })
export class NewWebhookDto {
  @ApiProperty(WEBHOOK_PROPERTIES.url)
  @IsWebhookUrl(URL_FIELD)
  url: string;

  @ApiProperty({
    description: 'Only these event types are delivered; absent: every type.',
    ...EVENT_TYPE_LIST_SCHEMA,
    minItems: 1,
    uniqueItems: true,
    required: false,
  })
  // Absent means every type; null is refused, as @IsOptional would let it through.
  @ValidateIf((_webhook, value) => value !== undefined)
  @IsArray(EVENTS)
  @ArrayNotEmpty(EVENTS)
  @ArrayUnique(EVENTS)
  @IsIn(EVENT_TYPES, { ...EVENTS, each: true })
  events?: EventType[];
}
