import {
  applyDecorators,
  Body,
  Delete,
  Get,
  HttpCode,
  Param,
  Put,
  Query,
  Res,
} from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RequireScope } from '../auth/require-scope.decorator.js';
import { ApiErrorResponses, errorContent } from '../errors/api-error-responses.js';
import {
  ApiConditionalGet,
  COMPUTED_ETAG,
  validatorHeaders,
} from '../http/conditional-get.openapi.js';
import { type IfMatch, IfMatchHeader } from '../http/if-match.js';
import { ParsePathIdPipe } from '../http/path-id.pipe.js';
import { HttpRoute } from '../http/route-config.js';
import { RATE_LIMIT_HEADERS } from '../rate-limit/rate-limit.openapi.js';
import { V1Controller } from '../rate-limit/v1-controller.decorator.js';
import {
  CategoriesService,
  categoryNotFoundMessage,
  nameTakenMessage,
  type TaggedCategory,
} from './categories.service.js';
import { categoryEntityTag } from './category-entity-tag.js';
import { CategoryDto } from './dto/category.dto.js';
import { CategoryNameDto } from './dto/category-name.dto.js';
import { CATEGORY_ID_SCHEMA } from './dto/category-properties.js';
import { ListCategoriesQueryDto } from './dto/list-categories-query.dto.js';

export const CATEGORIES_PATH = '/v1/categories';

const CATEGORY_ID = new ParsePathIdPipe('categoryId');

const CATEGORY_ETAG = {
  description:
    'Strong validator of this category: changes whenever it is renamed or deleted. Send it in ' +
    '`If-Match` on putCategory or deleteCategory to change the category only if nobody else has since.',
  schema: { type: 'string', example: categoryEntityTag(1, 2) },
};

const LIST_CATEGORIES_HEADERS = {
  Link: {
    description: 'RFC 8288 link to the next page, `<…>; rel="next"`; absent on the last page.',
    schema: { type: 'string' },
  },
  ...RATE_LIMIT_HEADERS,
};

const PUT_CATEGORY_DESCRIPTION =
  'Names a category id, the id pets carry as `categoryId` (so the client chooses it): 201 when the ' +
  'id had no name, 200 when this renames it (the same name again changes nothing). Names are ' +
  'unique, compared exactly: a name another category has is 409 `CATEGORY_NAME_TAKEN`, and of ' +
  'concurrent claims of one name exactly one succeeds. Send the ETag you read in `If-Match` to ' +
  'rename only if nobody else has since (412 otherwise; an id without a name matches no tag, not ' +
  'even `*`). Refusals come in this order: 401, 403, 400/413/415, 412, 409.';

const DELETE_CATEGORY_DESCRIPTION =
  "Removes the category's name: its pets keep their `categoryId`, and the id can be named again. " +
  '`If-Match` as on putCategory. Refusals come in this order: 401, 403, 400, 404, 412.';

const IF_MATCH_HEADER = {
  name: 'If-Match',
  required: false,
  description:
    'The `ETag` of the category as you read it (a list of them, or `*`): the change is made only ' +
    'if the category still has it, otherwise 412. Compared strongly: a weak tag never matches.',
  schema: { type: 'string' },
};

@V1Controller('categories', 'categories')
export class CategoriesController {
  constructor(private readonly categories: CategoriesService) {}

  @Get()
  @RequireScope('pets:read')
  @HttpRoute({ etag: true })
  @ApiOperation({
    operationId: 'listCategories',
    summary: 'List the categories',
    description:
      'Named categories in ascending id order, at most `limit` per page, paged like listPets: follow `Link: <…>; rel="next"` until it is absent.',
  })
  @ApiOkResponse({
    description: 'A page of categories, in ascending id order.',
    type: [CategoryDto],
    headers: { ...validatorHeaders(COMPUTED_ETAG), ...LIST_CATEGORIES_HEADERS },
  })
  @ApiConditionalGet(LIST_CATEGORIES_HEADERS)
  @ApiErrorResponses(400)
  async listCategories(
    @Query() query: ListCategoriesQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<CategoryDto[]> {
    const page = await this.categories.list(query);
    if (page.next) {
      const next = new URLSearchParams(page.next).toString();
      reply.header('Link', `<${CATEGORIES_PATH}?${next}>; rel="next"`);
    }
    return page.categories;
  }

  @Get(':categoryId')
  @RequireScope('pets:read')
  @HttpRoute({ etag: true })
  @ApiOperation({
    operationId: 'getCategory',
    summary: 'Get a category',
    description: 'The name of a category id, with its ETag; 404 when the id has no name.',
  })
  @ApiOkResponse({
    description: 'The category.',
    type: CategoryDto,
    headers: { ...validatorHeaders(CATEGORY_ETAG), ...RATE_LIMIT_HEADERS },
  })
  @ApiConditionalGet(RATE_LIMIT_HEADERS, CATEGORY_ETAG)
  @ApiCategoryErrors(400, 404)
  @ApiCategoryId()
  async getCategory(
    @Param('categoryId', CATEGORY_ID) id: number,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<CategoryDto> {
    return withEntityTag(reply, await this.categories.get(id));
  }

  @Put(':categoryId')
  @RequireScope('pets:write')
  @ApiOperation({
    operationId: 'putCategory',
    summary: 'Name a category',
    description: PUT_CATEGORY_DESCRIPTION,
  })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiCreatedResponse({
    description: 'The id had no name: the category as named.',
    type: CategoryDto,
    headers: { ETag: CATEGORY_ETAG, ...RATE_LIMIT_HEADERS },
  })
  @ApiOkResponse({
    description: 'The category, renamed (or unchanged when the name was already its own).',
    type: CategoryDto,
    headers: { ETag: CATEGORY_ETAG, ...RATE_LIMIT_HEADERS },
  })
  @ApiErrorResponses(400, 412, 413, 415)
  @ApiResponse({
    status: 409,
    description:
      '`CATEGORY_NAME_TAKEN`: another category has this name; the message names it. Nothing was changed.',
    content: errorContent(409, { CATEGORY_NAME_TAKEN: nameTakenMessage('Dogs') }),
  })
  @ApiCategoryId()
  async putCategory(
    @Param('categoryId', CATEGORY_ID) id: number,
    @Body() { name }: CategoryNameDto,
    @IfMatchHeader() ifMatch: IfMatch | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<CategoryDto> {
    const { created, ...answer } = await this.categories.put(id, name, ifMatch);
    reply.code(created ? 201 : 200);
    return withEntityTag(reply, answer);
  }

  @Delete(':categoryId')
  @HttpCode(204)
  @RequireScope('pets:write')
  @ApiOperation({
    operationId: 'deleteCategory',
    summary: 'Delete a category',
    description: DELETE_CATEGORY_DESCRIPTION,
  })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiNoContentResponse({ description: 'The name is removed.', headers: RATE_LIMIT_HEADERS })
  @ApiCategoryErrors(400, 404)
  @ApiErrorResponses(412)
  @ApiCategoryId()
  async deleteCategory(
    @Param('categoryId', CATEGORY_ID) id: number,
    @IfMatchHeader() ifMatch: IfMatch | undefined,
  ): Promise<void> {
    await this.categories.delete(id, ifMatch);
  }
}

function ApiCategoryId() {
  return ApiParam({
    name: 'categoryId',
    description: 'The category id, as pets carry it in `categoryId`.',
    schema: { ...CATEGORY_ID_SCHEMA, example: 1 },
  });
}

/** The 400 of a malformed id and the 404 of an id without a name, with this feature's messages. */
function ApiCategoryErrors(badRequest: 400, notFound: 404) {
  return applyDecorators(
    ApiErrorResponses(badRequest),
    ApiResponse({
      status: notFound,
      description: '`NOT_FOUND`: the category id has no name.',
      content: errorContent(notFound, { NOT_FOUND: categoryNotFoundMessage(1) }),
    }),
  );
}

/** Sends the category's ETag with it. */
function withEntityTag(reply: FastifyReply, { category, etag }: TaggedCategory): CategoryDto {
  reply.header('ETag', etag);
  return category;
}
