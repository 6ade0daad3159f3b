import type { Deprecation } from '../deprecation/deprecation.js';

export const PETS_PATH = '/v1/pets';

/**
 * getPet is deprecated in favour of listPets with the status filter, and answers 410 GONE from its
 * sunset on (docs/api-design.md, "Deprecation"). The one place these dates are written: the
 * headers, the 410, the OpenAPI document and its examples all read them from here.
 */
export const GET_PET_DEPRECATION: Deprecation = {
  operationId: 'getPet',
  since: new Date('2026-11-21T00:00:00Z'),
  sunset: new Date('2030-12-05T00:00:00Z'),
  successor: PETS_PATH,
  replacement: `listPets (GET ${PETS_PATH}) with the status filter`,
};
