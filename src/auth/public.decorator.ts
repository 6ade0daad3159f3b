import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC_KEY = 'isPublic';

/** Opts a route out of the global API-key guard. Only health checks use it. */
export const Public = () => SetMetadata(IS_PUBLIC_KEY, true);
