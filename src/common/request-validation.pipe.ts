import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { RejectedBody } from '../http/request-body.js';
import { validationFailed } from './api-error.js';

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
    if (where && metadata.metatype && this.toValidate(metadata)) assertPlainObject(value, where);
    return super.transform(value, metadata);
  }
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
  // class-transformer skips (and so the whitelist never sees) keys that exist on Object.prototype,
  // such as toString or __proto__; none of them is a field of ours.
  const inherited = Object.keys(value).find((key) => key in Object.prototype);
  if (inherited) throw validationFailed(`${inherited} is not a known field`);
}

function describe(errors: ValidationError[]): string {
  return errors
    .map(({ property, constraints = {} }) =>
      constraints.whitelistValidation
        ? `${property} is not a known field`
        : Object.values(constraints)[0],
    )
    .join('; ');
}
