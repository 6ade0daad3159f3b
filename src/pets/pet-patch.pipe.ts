import { Injectable, type PipeTransform } from '@nestjs/common';
import { validationFailed } from '../errors/api-error.js';
import { PATCHABLE_FIELDS, type PetPatchDto } from './dto/pet-patch.dto.js';

/**
 * A patch must name at least one member (`minProperties: 1`); runs after the validation pipe,
 * which has refused every other member and every invalid value.
 */
@Injectable()
export class NonEmptyPatchPipe implements PipeTransform<PetPatchDto, PetPatchDto> {
  transform(patch: PetPatchDto): PetPatchDto {
    if (PATCHABLE_FIELDS.some((field) => patch[field] !== undefined)) return patch;
    throw validationFailed(`request body must name at least one of ${PATCHABLE_FIELDS.join(', ')}`);
  }
}
