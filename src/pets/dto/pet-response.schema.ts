import { RouteSchema } from '@nestjs/platform-fastify';

/**
 * PetDto as JSON Schema, for Fastify's serializer: with a response schema, Fastify writes the body
 * with a function compiled for this shape (fast-json-stringify) instead of JSON.stringify, about
 * twice as fast for a page (docs/performance.md). The bytes are the same: the properties in
 * PetDto's order, an absent status left out. Only the serializer reads this; the OpenAPI document
 * is built from PetDto's decorators, and test/unit/pets/pet-response-schema.spec.ts checks that the
 * two name the same properties in the same order.
 */
export const PET_JSON_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    categoryId: { type: 'integer' },
    status: { type: 'string' },
  },
  required: ['id', 'name', 'categoryId'],
} as const;

/** Serializes the route's answer with `status` as one Pet. */
export const RespondsWithPet = (status: 200 | 201) =>
  RouteSchema({ response: { [status]: PET_JSON_SCHEMA } });

/** Serializes the route's 200 as an array of Pets. */
export const RespondsWithPets = () =>
  RouteSchema({ response: { 200: { type: 'array', items: PET_JSON_SCHEMA } } });
