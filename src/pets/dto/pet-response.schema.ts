import { RouteSchema } from '@nestjs/platform-fastify';
import { PET_PROPERTIES } from './pet-properties.js';

const properties = Object.entries(PET_PROPERTIES);

/**
 * PetDto as JSON Schema, for Fastify's serializer: with a response schema, Fastify writes the body
 * with a function compiled for this shape (fast-json-stringify) instead of JSON.stringify
 * (docs/performance.md). The bytes are the same: the properties in PetDto's order, an absent
 * status left out. Only types and presence, from the table PetDto's decorators are written from;
 * test/unit/pets/pet-response-schema.spec.ts checks that the OpenAPI Pet names the same
 * properties in the same order.
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
