import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { RejectedBody } from '../http/request-body.js';
import { ApiError, validationFailed } from './api-error.js';

const WHERE: Partial<Record<ArgumentMetadata['type'], string>> = {
  body: 'request body',
  query: 'query string',
  param: 'path',
};

/**
 * The one validation pipe (registered as APP_PIPE): DTO rules of class-validator, unknown fields
 * rejected by name, no implicit type coercion, and one 400 message naming every offending field.
 */
@Injectable()
export class RequestValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      transformOptions: { enableImplicitConversion: false },
      stopAtFirstError: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => validationFailed(describe(errors)),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (value instanceof RejectedBody) throw value.error;
    const where = WHERE[metadata.type];
    // A single primitive (a path segment) is left as it came: no implicit coercion; its own pipe parses it.
    if (!where || !metadata.metatype || !this.toValidate(metadata)) return value;
    assertPlainObject(value, where);
    const dropped = Object.keys(value).filter(isDroppedKey);
    if (dropped.length === 0) return super.transform(value, metadata);
    // The whitelist never sees these keys, so they are named here, with whatever else is wrong.
    const problems = dropped.map(unknownField);
    const rest = Object.fromEntries(Object.entries(value).filter(([key]) => !isDroppedKey(key)));
    try {
      await super.transform(rest, metadata);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      problems.push(error.body.message);
    }
    throw validationFailed(problems.join('; '));
  }
}

/**
 * Keys removed before validation: class-transformer skips those that exist on Object.prototype
 * (toString, __proto__, constructor...), and Nest's ValidationPipe deletes `prototype`. None of
 * them is a field of ours.
 */
function isDroppedKey(key: string): boolean {
  return key in Object.prototype || key === 'prototype';
}

function assertPlainObject(
  value: unknown,
  where: string,
): asserts value is Record<string, unknown> {
  if (value === undefined || value === null) {
    throw validationFailed(`${where} is required: expected a JSON object`);
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw validationFailed(
      `${where} must be a JSON object, not ${Array.isArray(value) ? 'an array' : typeof value}`,
    );
  }
}

function describe(errors: ValidationError[]): string {
  return errors
    .map(({ property, constraints = {} }) =>
      constraints.whitelistValidation ? unknownField(property) : Object.values(constraints)[0],
    )
    .join('; ');
}

/**
 * A field name as it appears in a message: as it is, or as a JSON string when it is empty or
 * holds spaces or control characters, which would otherwise vanish in the sentence.
 */
function unknownField(name: string): string {
  const label = /^[^\s\p{C}"]+$/u.test(name) ? name : JSON.stringify(name);
  return `${label} is not a known field`;
}
