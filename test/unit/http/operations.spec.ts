import type { OpenAPIObject } from '@nestjs/swagger';
import { describe, expect, it } from 'vitest';
import { operationsByRoute } from '../../../src/http/operations.js';

const document = {
  openapi: '3.0.0',
  info: { title: 't', version: '1' },
  paths: {
    '/pets': {
      get: { operationId: 'listPets', responses: {} },
      post: { operationId: 'createPet', responses: {} },
    },
    '/pets/{petId}': { get: { operationId: 'getPet', deprecated: true, responses: {} } },
    '/unnamed': { get: { responses: {} } },
  },
} as unknown as OpenAPIObject;

describe('operationsByRoute', () => {
  it('keys each documented operationId by method and Fastify route pattern under /v1', () => {
    expect(Object.fromEntries(operationsByRoute(document))).toEqual({
      'GET /v1/pets': 'listPets',
      'POST /v1/pets': 'createPet',
      'GET /v1/pets/:petId': 'getPet',
    });
  });
});
