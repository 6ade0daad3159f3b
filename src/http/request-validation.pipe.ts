import {
  type ArgumentMetadata,
  Injectable,
  type PipeTransform,
  type Type,
  type ValidationError,
} from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidatorOptions } from 'class-validator';
import { RejectedBody } from './request-body.js';
import { ApiError, validationFailed } from '../errors/api-error.js';

const WHERE: Partial<Record<ArgumentMetadata['type'], string>> = {
  body: 'request body',
  query: 'query string',
  param: 'path',
};

/** Types that are not DTO classes: such an argument is passed through for its own pipe to parse. */
const NOT_A_DTO = new Set<unknown>([String, Boolean, Number, Array, Object, Buffer, Promise]);

const VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  stopAtFirstError: true,
  validationError: { target: false, value: false },
};

/**
 * The one validation pipe (APP_PIPE): a DTO's class-validator rules, no coercion, and one 400 that
 * names every offending field, unknown ones included, which Nest's ValidationPipe cannot word.
 * Every validator of ours is synchronous, so `validateSync` answers as `validate` would.
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  transform(value: unknown, { type, metatype }: ArgumentMetadata): unknown {
    if (value instanceof RejectedBody) throw value.error;
    const where = WHERE[type];
    // A single primitive (a path segment) is left as it came, with no implicit coercion: its own
    // pipe parses it.
    if (!where || !metatype || NOT_A_DTO.has(metatype)) return value;
    assertPlainObject(value, where);
    const dropped = Object.keys(value).filter(isDroppedKey);
    if (dropped.length === 0) return validated(metatype, value);
    // The whitelist never sees these keys, so they are named here, with whatever else is wrong.
    const problems = dropped.map(unknownField);
    const rest = Object.fromEntries(Object.entries(value).filter(([key]) => !isDroppedKey(key)));
    try {
      validated(metatype, rest);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      problems.push(error.body.message);
    }
    throw validationFailed(problems.join('; '));
  }
}

function validated(metatype: Type, plain: Record<string, unknown>): object {
  const dto = plainToInstance(metatype, plain, { enableImplicitConversion: false }) as object;
  const errors = validateSync(dto, VALIDATOR_OPTIONS);
  if (errors.length > 0) throw validationFailed(describe(errors));
  return dto;
}

/**
 * Keys this pipe names itself: class-transformer skips those that exist on Object.prototype
 * (toString, __proto__, constructor...), so the whitelist never sees them; `prototype` is named
 * with them, so all such keys get one answer. None of them is a field of ours.
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
