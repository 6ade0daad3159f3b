import { Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { RequireScope } from '../auth/require-scope.decorator.js';
import { ApiErrorResponses } from '../errors/api-error-responses.js';
import { RATE_LIMIT_HEADERS } from '../rate-limit/rate-limit.openapi.js';
import { V1Controller } from '../rate-limit/v1-controller.decorator.js';
import { InventoryDto } from './dto/inventory.dto.js';
import { InventoryQueryDto } from './dto/inventory-query.dto.js';
import { InventoryService } from './inventory.service.js';

const GET_INVENTORY_DESCRIPTION =
  'How many animals are available, pending, sold and without a status, and all of them, in the ' +
  'store or in one category. Exact: once changes stop, the counts equal what listing every ' +
  'animal gives, whichever instance answers; reading them costs the same however many animals ' +
  'there are.';

@V1Controller('inventory', 'animals')
export class InventoryController {
  constructor(private readonly inventory: InventoryService) {}

  @Get()
  @RequireScope('pets:read')
  @ApiOperation({
    operationId: 'getInventory',
    summary: 'Count the animals by status',
    description: GET_INVENTORY_DESCRIPTION,
  })
  @ApiOkResponse({
    description: 'The counts.',
    type: InventoryDto,
    headers: RATE_LIMIT_HEADERS,
  })
  @ApiErrorResponses(400)
  getInventory(@Query() { categoryId }: InventoryQueryDto): Promise<InventoryDto> {
    return this.inventory.count(categoryId);
  }
}
