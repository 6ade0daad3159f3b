import { ValueTransformer } from 'typeorm';

/**
 * PostgreSQL `bigint` arrives from the driver as a string (it may exceed 2^53); ids and category ids
 * are bounded to Number.MAX_SAFE_INTEGER by validation, so they are exact as JSON numbers.
 */
export const bigintAsNumber: ValueTransformer = {
  to: (value: number | undefined) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value)),
};
