import Fastify from 'fastify';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PET_JSON_SCHEMA } from '../../../src/pets/dto/pet-response.schema.js';

/** The committed contract; test/e2e/openapi.e2e-spec.ts keeps it equal to what the code generates. */
const { schemas } = JSON.parse(readFileSync('openapi.json', 'utf8')).components;
const openApiPet = schemas.Pet;

/** A property's JSON type, following `allOf: [{ $ref }]` to the named schema (status → PetStatus). */
function documentedType(property: {
  type?: string;
  allOf?: { $ref: string }[];
}): string | undefined {
  const ref = property.allOf?.[0]?.$ref;
  return ref === undefined ? property.type : schemas[ref.split('/').pop()!].type;
}

describe('the Pet schema Fastify serializes with', () => {
  it("names the OpenAPI Pet's properties, in the same order", () => {
    expect(Object.keys(PET_JSON_SCHEMA.properties)).toEqual(Object.keys(openApiPet.properties));
  });

  it('requires what the OpenAPI Pet requires', () => {
    expect([...PET_JSON_SCHEMA.required]).toEqual(openApiPet.required);
  });

  it('carries only a type per property, so the serializer has nothing else to act on', () => {
    for (const [name, property] of Object.entries(PET_JSON_SCHEMA.properties))
      expect(Object.keys(property), name).toEqual(['type']);
  });

  it('gives each property the JSON type the document gives it', () => {
    for (const [name, { type }] of Object.entries(PET_JSON_SCHEMA.properties))
      expect(type, name).toBe(documentedType(openApiPet.properties[name]));
  });
});

describe('a Pet as the compiled serializer writes it', () => {
  // A replay of createPet sends the stored JSON.stringify text (docs/api-design.md,
  // "Idempotency"): it is the first answer only if the serializer wrote those same bytes.
  it('is JSON.stringify of it, byte for byte, whatever its name holds', async () => {
    const names = [
      ...Array.from({ length: 32 }, (_, code) => `a${String.fromCharCode(code)}b`),
      '"quoted" \\ back\u007f',
      '\u2028\u2029',
      'lone \ud800 and \udc00 surrogates',
      'Ünïcødé 🐶 名前',
      '🐈'.repeat(255),
      `${'x'.repeat(200)}"\\\n`,
    ];
    const pets = names.flatMap((name, i) => [
      { id: i + 1, name, categoryId: 9007199254740991, status: 'sold' },
      { id: i + 1, name, categoryId: 1 },
    ]);
    const app = Fastify();
    app.post<{ Body: { i: number } }>(
      '/',
      { schema: { response: { 201: PET_JSON_SCHEMA } } },
      async (request, reply) => reply.code(201).send(pets[request.body.i]),
    );
    try {
      for (const [i, pet] of pets.entries()) {
        const response = await app.inject({ method: 'POST', url: '/', payload: { i } });
        expect(response.body, JSON.stringify(pet)).toBe(JSON.stringify(pet));
      }
    } finally {
      await app.close();
    }
  });
});
