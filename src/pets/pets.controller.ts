import { Body, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import {
  ApiConsumes,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { type ApiKeyPrincipal, CurrentPrincipal } from '../auth/principal.js';
import { RequireScope } from '../auth/require-scope.decorator.js';
import { ApiErrorResponses, errorContent } from '../errors/api-error-responses.js';
import {
  ApiConditionalGet,
  COMPUTED_ETAG,
  validatorHeaders,
} from '../http/conditional-get.openapi.js';
import { type IfMatch, IfMatchHeader } from '../http/if-match.js';
import { MERGE_PATCH_TYPE } from '../http/request-body.js';
import { Deprecated, deprecationHeaders, goneMessage } from '../deprecation/deprecation.js';
import { ParsePathIdPipe } from '../http/path-id.pipe.js';
import { HttpRoute } from '../http/route-config.js';
import { RATE_LIMIT_HEADERS } from '../rate-limit/rate-limit.openapi.js';
import { V1Controller } from '../rate-limit/v1-controller.decorator.js';
import { ListPetsQueryDto } from './dto/list-pets-query.dto.js';
import { NewPetDto } from './dto/new-pet.dto.js';
import { PetDto } from './dto/pet.dto.js';
import { PetPatchDto } from './dto/pet-patch.dto.js';
import { PetChangeDto } from './dto/pet-change.dto.js';
import { RespondsWithPet, RespondsWithPets } from './dto/pet-response.schema.js';
import { ID_SCHEMA } from './dto/pet-properties.js';
import {
  ApiIdempotencyKeyHeader,
  IDEMPOTENT_REPLAYED_HEADER,
  IDEMPOTENT_REPLAYED_RESPONSE_HEADER,
  IdempotencyKey,
} from '../idempotency/idempotency-key.js';
import { GET_PET_DEPRECATION, PETS_PATH } from './get-pet-deprecation.js';
import { petEntityTag } from './pet-entity-tag.js';
import { describeTransitions, invalidTransitionMessage } from './pet-lifecycle.js';
import { petHeldMessage } from '../orders/pet-holds.js';
import { NonEmptyPatchPipe } from './pet-patch.pipe.js';
import { PetsService, type TaggedPet } from './pets.service.js';

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

const PET_ID = new ParsePathIdPipe('petId');

/** The body types updatePet takes, merge patch first: the one RFC 7396 defines for it. */
const PATCH_BODY_TYPES = [MERGE_PATCH_TYPE, 'application/json'];

/** The ETag of an answer that carries one pet (docs/api-design.md, "The pet lifecycle"). */
const PET_ETAG = {
  description:
    'Strong validator of this pet: changes whenever the pet changes. Send it in `If-Match` on ' +
    'updatePet to change the pet only if nobody else has since, or in `If-None-Match` on getPet.',
  schema: { type: 'string', example: petEntityTag(42, 3) },
};

const UPDATE_PET_DESCRIPTION =
  'Changes an animal: a JSON Merge Patch (RFC 7396) of `name`, `categoryId` and `status`. Naming ' +
  '`status` asks for a change of status, and only these are allowed (anything else, including the ' +
  'status the pet already has, is 409 `INVALID_TRANSITION`):\n\n' +
  `${describeTransitions()}\n\n` +
  'Send the ETag of the pet you read in `If-Match` to change it only if nobody else has since ' +
  '(412 `PRECONDITION_FAILED` otherwise). Of concurrent changes each applies to the pet as the ' +
  'one before left it, so of two clerks selling the same animal exactly one succeeds. A patch ' +
  'that changes nothing answers 200 and writes nothing. Refusals come in this order: 401, 403, ' +
  '400/413/415, 404, 412, 409.';

const CREATE_PET_DESCRIPTION =
  'Adds an animal and returns it with its assigned id. Send an `Idempotency-Key` to make retries ' +
  'safe: a retry of a request whose response was lost then returns the same animal instead of ' +
  'adding a second one.';

const LIST_PETS_DESCRIPTION =
  'Returns animals in ascending id order, at most `limit` per page. When more follow, the response has a ' +
  '`Link: <…>; rel="next"` header; following it until it is absent visits every animal that existed when ' +
  'the walk began exactly once, even while animals are being added.';

const DELETE_PET_DESCRIPTION =
  'Removes an animal, e.g. one entered by mistake. Afterwards getPet, updatePet and deletePet ' +
  'answer 404 for it, listPets never shows it, and its id is never given to another animal. ' +
  'Send the ETag you read in `If-Match` to remove it only if nobody changed it since (412 ' +
  'otherwise). An animal held by an open order cannot be removed (409 `PET_HELD`). Refusals come ' +
  'in this order: 401, 403, 400, 404, 412, 409.';

@V1Controller('pets', 'animals')
// The events feature's PetEvent refers to it by name (docs/events.md).
@ApiExtraModels(PetChangeDto)
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
    headers: { ...validatorHeaders(COMPUTED_ETAG), ...LIST_PETS_HEADERS },
  })
  @ApiConditionalGet(LIST_PETS_HEADERS)
  @ApiErrorResponses(400)
  async listPets(
    @Query() query: ListPetsQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PetDto[]> {
    const page = await this.pets.list(query);
    if (page.next) reply.header('Link', `<${PETS_PATH}?${queryString(page.next)}>; rel="next"`);
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
  @ApiIdempotencyKeyHeader()
  @ApiCreatedResponse({
    description: 'The animal as stored, with its assigned id.',
    type: PetDto,
    headers: {
      ETag: PET_ETAG,
      ...IDEMPOTENT_REPLAYED_RESPONSE_HEADER,
      ...RATE_LIMIT_HEADERS,
    },
  })
  @ApiErrorResponses(400, 413, 415, 422)
  async createPet(
    @Body() newPet: NewPetDto,
    @IdempotencyKey() idempotencyKey: string | undefined,
    @CurrentPrincipal() principal: ApiKeyPrincipal,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PetDto | string> {
    if (idempotencyKey === undefined) return withEntityTag(reply, await this.pets.create(newPet));
    const created = await this.pets.createOnce(newPet, principal.id, idempotencyKey);
    if (!created.replayed) return withEntityTag(reply, created);
    // The stored text goes out as it is, so a replay is the first answer byte for byte.
    reply
      .header(IDEMPOTENT_REPLAYED_HEADER, 'true')
      .header('ETag', created.etag)
      .type('application/json; charset=utf-8');
    return created.body;
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
    headers: { ...validatorHeaders(PET_ETAG), ...GET_PET_HEADERS },
  })
  @ApiConditionalGet(GET_PET_HEADERS, PET_ETAG)
  @ApiErrorResponses(400, 404)
  @ApiResponse({
    status: 410,
    description: `\`GONE\`: ${goneMessage(GET_PET_DEPRECATION)}.`,
    content: errorContent(410, { GONE: goneMessage(GET_PET_DEPRECATION) }),
    headers: GET_PET_HEADERS,
  })
  @ApiPetId()
  async getPet(
    @Param('petId', PET_ID) petId: number,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PetDto> {
    return withEntityTag(reply, await this.pets.get(petId));
  }

  @Patch(':petId')
  @RequireScope('pets:write')
  @HttpRoute({ bodyTypes: PATCH_BODY_TYPES })
  @RespondsWithPet(200)
  @ApiOperation({
    operationId: 'updatePet',
    summary: 'Change an animal',
    description: UPDATE_PET_DESCRIPTION,
  })
  @ApiConsumes(...PATCH_BODY_TYPES)
  @ApiHeader({
    name: 'If-Match',
    required: false,
    description:
      'The `ETag` of the pet as you read it (a list of them, or `*`): the change is made only if ' +
      'the pet still has it, otherwise 412. Compared strongly: a weak tag (`W/"…"`) never matches.',
    schema: { type: 'string' },
  })
  @ApiOkResponse({
    description: 'The animal after the change.',
    type: PetDto,
    headers: { ETag: PET_ETAG, ...RATE_LIMIT_HEADERS },
  })
  @ApiErrorResponses(400, 404, 412, 413)
  @ApiResponse({
    status: 409,
    description:
      '`INVALID_TRANSITION`: the table above does not allow this status change; the message names the ' +
      'current status and the allowed ones. `PET_HELD`: an open order holds the animal, so its ' +
      "status is the order's to change. Nothing was changed.",
    content: errorContent(409, {
      INVALID_TRANSITION: invalidTransitionMessage(42, 'available', 'available'),
      PET_HELD: petHeldMessage(42),
    }),
  })
  @ApiResponse({
    status: 415,
    description: `\`UNSUPPORTED_MEDIA_TYPE\`: the body is not ${PATCH_BODY_TYPES.join(' or ')}.`,
    content: errorContent(415, {
      UNSUPPORTED_MEDIA_TYPE: `Content-Type must be ${PATCH_BODY_TYPES.join(' or ')}`,
    }),
    headers: {
      'Accept-Patch': {
        description: 'The body types this operation takes (RFC 5789 §3.1).',
        schema: { type: 'string', example: PATCH_BODY_TYPES.join(', ') },
      },
    },
  })
  @ApiPetId()
  async updatePet(
    @Param('petId', PET_ID) petId: number,
    @Body(NonEmptyPatchPipe) patch: PetPatchDto,
    @IfMatchHeader() ifMatch: IfMatch | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PetDto> {
    return withEntityTag(reply, await this.pets.update(petId, patch, ifMatch));
  }

  @Delete(':petId')
  @HttpCode(204)
  @RequireScope('pets:write')
  @ApiOperation({
    operationId: 'deletePet',
    summary: 'Remove an animal',
    description: DELETE_PET_DESCRIPTION,
  })
  @ApiHeader({
    name: 'If-Match',
    required: false,
    description:
      'The `ETag` of the pet as you read it (a list of them, or `*`): the pet is removed only if ' +
      'it still has it, otherwise 412. Compared strongly: a weak tag (`W/"…"`) never matches.',
    schema: { type: 'string' },
  })
  @ApiNoContentResponse({ description: 'The animal is removed.', headers: RATE_LIMIT_HEADERS })
  @ApiErrorResponses(400, 404, 412)
  @ApiResponse({
    status: 409,
    description: '`PET_HELD`: an open order holds the animal. Nothing was changed.',
    content: errorContent(409, { PET_HELD: petHeldMessage(42) }),
  })
  @ApiPetId()
  async deletePet(
    @Param('petId', PET_ID) petId: number,
    @IfMatchHeader() ifMatch: IfMatch | undefined,
  ): Promise<void> {
    await this.pets.delete(petId, ifMatch);
  }
}

function ApiPetId() {
  return ApiParam({
    name: 'petId',
    description: 'The identifier of the animal.',
    schema: { ...ID_SCHEMA, example: 42 },
  });
}

/**
 * The parameters in their order, each value percent-encoded: the next page's are a number, a status
 * and a base64url cursor, which `URLSearchParams` would write the same, at several times the cost.
 */
function queryString(parameters: Record<string, string>): string {
  let query = '';
  for (const name in parameters)
    query += `${query === '' ? '' : '&'}${name}=${encodeURIComponent(parameters[name])}`;
  return query;
}

/** Sends the pet's ETag with it. */
function withEntityTag(reply: FastifyReply, { pet, etag }: TaggedPet): PetDto {
  reply.header('ETag', etag);
  return pet;
}
