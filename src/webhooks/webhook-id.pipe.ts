import { Injectable, type PipeTransform } from '@nestjs/common';
import { validationFailed } from '../errors/api-error.js';
import { MAX_ID, parseCanonicalDecimal } from '../http/canonical-decimal.js';

/** The `id` path segment of a webhook: a canonical decimal integer from 1 to MAX_ID. */
@Injectable()
export class ParseWebhookIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    const id = parseCanonicalDecimal(value);
    if (id !== undefined) return id;
    throw validationFailed(`id must be a decimal integer from 1 to ${MAX_ID}`);
  }
}
