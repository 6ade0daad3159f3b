import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { type ApiKeyPrincipal, CurrentPrincipal } from '../auth/principal.js';
import { RequireScope } from '../auth/require-scope.decorator.js';
import { ApiErrorResponses, errorContent } from '../errors/api-error-responses.js';
import { PRINTABLE_ASCII_PATTERN } from '../http/printable-ascii.js';
import { ApiConditionalGet, ETAG_HEADERS } from '../http/conditional-get.openapi.js';
import { Deprecated, deprecationHeaders, goneMessage } from '../deprecation/deprecation.js';
import { HttpRoute } from '../http/route-config.js';
import { ApiRateLimitedResponse, RATE_LIMIT_HEADERS } from '../rate-limit/rate-limit.openapi.js';
import { ListPetsQueryDto } from './dto/list-pets-query.dto.js';
import { NewPetDto } from './dto/new-pet.dto.js';
import { PetDto } from './dto/pet.dto.js';
import { RespondsWithPet, RespondsWithPets } from './dto/pet-response.schema.js';
import { ID_SCHEMA } from './dto/pet-properties.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENCY_KEY_TTL_HOURS,
  IDEMPOTENT_REPLAYED_HEADER,
  IdempotencyKey,
} from './idempotency-key.js';
import { GET_PET_DEPRECATION, PETS_PATH } from './get-pet-deprecation.js';
import { ParsePetIdPipe } from './pet-id.pipe.js';
import { PetsService } from './pets.service.js';

/** getPet says on every response that it is going away (docs/api-design.md, "Deprecation"). */
const GET_PET_DEPRECATION_HEADERS = deprecationHeaders(GET_PET_DEPRECATION);

const LIST_PETS_HEADERS = {
  Link: {
    description: 'RFC 8288 link to the next page, `<…>; rel="next"`; absent on the last page.',
    schema: { type: 'string' },
  },
  ...RATE_LIMIT_HEADERS,
};

const GET_PET_HEADERS = {
  Deprecation: {
    description: 'RFC 9745: when this operation was deprecated.',
    schema: { type: 'string', example: GET_PET_DEPRECATION_HEADERS.Deprecation },
  },
  Sunset: {
    description: 'RFC 8594: when this operation is removed (from then on it answers 410 `GONE`).',
    schema: { type: 'string', example: GET_PET_DEPRECATION_HEADERS.Sunset },
  },
  Link: {
    description: 'The successor: `</v1/pets>; rel="successor-version"`.',
    schema: { type: 'string', example: GET_PET_DEPRECATION_HEADERS.Link },
  },
  ...RATE_LIMIT_HEADERS,
};

const CREATE_PET_DESCRIPTION =
  'Adds an animal and returns it with its assigned id. Send an `Idempotency-Key` to make retries ' +
  'safe: a retry of a request whose response was lost then returns the same animal instead of ' +
  'adding a second one.';

const LIST_PETS_DESCRIPTION =
  'Returns animals in ascending id order, at most `limit` per page. When more follow, the response has a ' +
  '`Link: <…>; rel="next"` header; following it until it is absent visits every animal that existed when ' +
  'the walk began exactly once, even while animals are being added.';

@ApiTags('animals')
@ApiErrorResponses(401)
@ApiRateLimitedResponse()
@ApiErrorResponses(500, 503)
@Controller({ path: 'pets', version: '1' })
export class PetsController {
  constructor(private readonly pets: PetsService) {}

  @Get()
  @RequireScope('pets:read')
  @HttpRoute({ etag: true })
  @RespondsWithPets()
  @ApiOperation({
    operationId: 'listPets',
    summary: 'List all animals',
    description: LIST_PETS_DESCRIPTION,
  })
  @ApiOkResponse({
    description: 'A page of animals, in ascending id order.',
    type: [PetDto],
    headers: { ...ETAG_HEADERS, ...LIST_PETS_HEADERS },
  })
  @ApiConditionalGet(LIST_PETS_HEADERS)
  @ApiErrorResponses(400)
  async listPets(
    @Query() query: ListPetsQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PetDto[]> {
    const page = await this.pets.list(query);
    if (page.next)
      reply.header(
        'Link',
        `<${PETS_PATH}?${new URLSearchParams(page.next).toString()}>; rel="next"`,
      );
    return page.pets;
  }

  @Post()
  @HttpCode(201)
  @RespondsWithPet(201)
  @RequireScope('pets:write')
  @ApiOperation({
    operationId: 'createPet',
    summary: 'Add an animal',
    description: CREATE_PET_DESCRIPTION,
  })
  @ApiHeader({
    name: IDEMPOTENCY_KEY_HEADER,
    required: false,
    description:
      `Makes retries safe: for ${IDEMPOTENCY_KEY_TTL_HOURS} hours, a repeat of this request with ` +
      'the same key and body returns the first response and creates nothing; the same key with ' +
      'another body is a 422. Keys are scoped to the API key. A new UUID per logical request is ' +
      'a good choice, e.g. `5f0c6e1e-8d7b-4a7e-9d0a-3b1f2c4d5e6f`.',
    // No example value: Swagger UI would pre-fill it, and every reader's "Try it out" would then
    // share one key and get the first reader's pet back.
    schema: {
      type: 'string',
      minLength: 1,
      maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
      pattern: PRINTABLE_ASCII_PATTERN,
    },
  })
  @ApiCreatedResponse({
    description: 'The animal as stored, with its assigned id.',
    type: PetDto,
    headers: {
      [IDEMPOTENT_REPLAYED_HEADER]: {
        description:
          '`true` when this is the stored response to an earlier request with the same Idempotency-Key.',
        schema: { type: 'string', enum: ['true'] },
      },
      ...RATE_LIMIT_HEADERS,
    },
  })
  @ApiErrorResponses(400, 413, 415, 422)
  async createPet(
    @Body() newPet: NewPetDto,
    @IdempotencyKey() idempotencyKey: string | undefined,
    @CurrentPrincipal() principal: ApiKeyPrincipal,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PetDto> {
    if (idempotencyKey === undefined) return this.pets.create(newPet);
    const { pet, replayed } = await this.pets.createOnce(newPet, principal.id, idempotencyKey);
    if (replayed) reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
    return pet;
  }

  @Get(':petId')
  @RequireScope('pets:read')
  @Deprecated(GET_PET_DEPRECATION)
  @HttpRoute({ responseHeaders: GET_PET_DEPRECATION_HEADERS, etag: true })
  @RespondsWithPet(200)
  @ApiOperation({
    operationId: GET_PET_DEPRECATION.operationId,
    summary: 'Get an animal (deprecated)',
    description:
      `Deprecated: removed on ${GET_PET_DEPRECATION_HEADERS.Sunset}. Use \`GET /pets\` with the ` +
      '`status` filter instead. From that instant on, every request with a valid key gets 410 `GONE`.',
    deprecated: true,
  })
  @ApiOkResponse({
    description: 'The animal.',
    type: PetDto,
    headers: { ...ETAG_HEADERS, ...GET_PET_HEADERS },
  })
  @ApiConditionalGet(GET_PET_HEADERS)
  @ApiErrorResponses(400, 404)
  @ApiResponse({
    status: 410,
    description: `\`GONE\`: ${goneMessage(GET_PET_DEPRECATION)}.`,
    content: errorContent(410, { GONE: goneMessage(GET_PET_DEPRECATION) }),
    headers: GET_PET_HEADERS,
  })
  @ApiParam({
    name: 'petId',
    description: 'The identifier of the animal.',
    schema: { ...ID_SCHEMA, example: 42 },
  })
  getPet(@Param('petId', ParsePetIdPipe) petId: number): Promise<PetDto> {
    return this.pets.get(petId);
  }
}
