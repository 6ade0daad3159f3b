import { Injectable } from '@nestjs/common';

/**
 * The time rules that depend on a date read (the getPet sunset, docs/api-design.md,
 * "Deprecation"). A provider, so tests replace it to stand on either side of a date instead of
 * moving the machine's clock (test/support/test-app.ts).
 */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}
