import { RouteSchema } from '@nestjs/platform-fastify';
import { PET_PROPERTIES } from './pet-properties.js';

const properties = Object.entries(PET_PROPERTIES);

/**
 * PetDto as JSON Schema for Fastify's compiled serializer (docs/performance.md): only types and
 * presence, from the table PetDto's decorators read, so the bytes match JSON.stringify's
 * (test/unit/pets/pet-response-schema.spec.ts checks the order against the OpenAPI Pet).
 */
export const PET_JSON_SCHEMA = {
  type: 'object',
  properties: Object.fromEntries(properties.map(([name, { type }]) => [name, { type }])),
  required: properties.filter(([, { required }]) => required).map(([name]) => name),
};

/** Serializes the route's answer with `status` as one Pet. */
export const RespondsWithPet = (status: 200 | 201) =>
  RouteSchema({ response: { [status]: PET_JSON_SCHEMA } });

/** Serializes the route's 200 as an array of Pets. */
export const RespondsWithPets = () =>
  RouteSchema({ response: { 200: { type: 'array', items: PET_JSON_SCHEMA } } });
